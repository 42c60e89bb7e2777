package chat

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"github.com/dsh-dev/dsh/internal/host"
)

// ResourceLister is a session that lists its MCP servers' resources
// (host.Session does): @ completion offers them as @SERVER:URI beside the
// workspace's files, and the host attaches one a prompt mentions.
type ResourceLister interface {
	Resources(ctx context.Context) ([]host.Resource, error)
}

// NoteMsg is a note for the user from outside the chat's loop (the host's
// warnings and MCP notices, such as a mention that could not be attached),
// sent to the running program.
type NoteMsg string

// resourcesMsg is a session's resources as @ completion offers them:
// SERVER:URI, without the @.
type resourcesMsg struct {
	gen       int
	listed    uint64 // the session's MCPListed when the listing began
	mentions  []string
	listError error
}

// listResources lists the session's resources for @ completion, once per
// session, in a command: a server may be slow to answer.
func (m *Model) listResources() tea.Cmd {
	rl, ok := m.sess.(ResourceLister)
	if !ok || m.mentions != nil || m.listing {
		return nil
	}
	m.listing = true
	gen, listed := m.gen, m.status.MCPListed
	return func() tea.Msg {
		rs, err := rl.Resources(context.Background())
		mentions := []string{} // listed, if empty: not listed again
		for _, r := range rs {
			if !r.Template { // a template's URI is not one to attach
				mentions = append(mentions, host.Mention(r.Server, r.URI)[1:])
			}
		}
		return resourcesMsg{gen: gen, listed: listed, mentions: mentions, listError: err}
	}
}

// listed keeps a session's resources for @ completion.
func (m *Model) mentionsListed(msg resourcesMsg) {
	if msg.gen != m.gen {
		return
	}
	if msg.listed != m.status.MCPListed { // the servers changed them meanwhile: list again when asked
		m.listing = false
		return
	}
	m.mentions, m.listing = msg.mentions, false
	if msg.listError != nil {
		m.sb.note("dsh: " + msg.listError.Error())
	}
	m.updateCompletion()
}
