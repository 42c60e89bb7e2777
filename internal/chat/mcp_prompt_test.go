package chat

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/dsh-dev/dsh/internal/host"
)

// A session's MCP prompts are in the palette beside the built-in commands,
// and one sent goes to the host as typed (the host expands it).
func TestMCPPromptCommands(t *testing.T) {
	h := newHarness(t, 100)
	h.sess.custom = []host.Command{{
		Name: "mcp__everything__args-prompt", Description: "A prompt with two arguments", ArgHint: "city [state]",
		Where: host.Both, Source: "mcp:everything"}}
	h.m.attach(Opened{Session: h.sess, Registry: h.m.reg})
	if c := h.m.findCommand("mcp__everything__args-prompt"); c.Source == "" {
		t.Errorf("the chat does not offer the MCP prompt")
	}
	if c := h.m.findCommand("help"); c.Description == "" {
		t.Errorf("the chat lost the built-in commands")
	}
	h.typeText("/args")
	if v := h.m.View().Content; !strings.Contains(v, "/mcp__everything__args-prompt") || !strings.Contains(v, "A prompt with two arguments") {
		t.Errorf("the palette does not offer the MCP prompt:\n%s", v)
	}
	h.send(key(tea.KeyEscape, 0))
	h.m.input.SetValue("/mcp__everything__args-prompt Paris")
	h.send(key(tea.KeyEnter, 0))
	if !h.m.running {
		t.Error("an MCP prompt is a turn: the chat should show it running")
	}
	h.settle()
	if len(h.sess.texts) != 1 || h.sess.texts[0] != "/mcp__everything__args-prompt Paris" {
		t.Errorf("the host was handed %q", h.sess.texts)
	}
}
