package chat

import (
	"slices"
	"testing"

	"github.com/dsh-dev/dsh/internal/host"
)

// TestListsFollowTheServers: when the host's status says the MCP servers'
// listings changed (MCPListed), the chat takes the session's commands again
// (a server's new prompt is a command at once) and forgets the resources
// listed for @ completion, so the next @ lists them anew; a status without
// such a change keeps both.
func TestListsFollowTheServers(t *testing.T) {
	tests := []struct {
		name   string
		listed uint64
		want   bool // the new command offered, the resources forgotten
	}{
		{"no change", 0, false},
		{"the servers changed", 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, 80)
			h.m.mentions = []string{"docs:mem://old"}
			h.sess.custom = append(h.sess.custom, host.Command{Name: "mcp__docs__late", Description: "a prompt that came later"})
			st := h.sess.status
			st.MCPListed = tt.listed
			h.events(host.Event{Kind: host.KindStatus, Status: st})
			offered := slices.ContainsFunc(h.m.table, func(c host.Command) bool { return c.Name == "mcp__docs__late" })
			if offered != tt.want || (h.m.mentions == nil) != tt.want {
				t.Errorf("the new command offered %v, the resources forgotten %v; want both %v", offered, h.m.mentions == nil, tt.want)
			}
		})
	}
}
