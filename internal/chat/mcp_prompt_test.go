package chat

import (
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/dsh-dev/dsh/internal/command"
	"github.com/dsh-dev/dsh/internal/toolset"
)

// expandingSession is a session with one MCP prompt.
type expandingSession struct {
	*fakeSession
	asked []string
}

func (e *expandingSession) ExpandPrompt(_ context.Context, name, args string) (string, bool, error) {
	e.asked = append(e.asked, name+" "+args)
	return "What's the weather in " + args + "?", true, nil
}

// A session's MCP prompts are in the palette beside the chat's commands, and
// one sent becomes the prompt its server wrote.
func TestMCPPromptCommands(t *testing.T) {
	h := newHarness(t, 100)
	es := &expandingSession{fakeSession: h.sess}
	h.m.attach(Opened{Session: es, Registry: toolset.New(toolset.Options{}), Commands: []command.Command{{
		Name: "mcp__everything__args-prompt", Description: "A prompt with two arguments", ArgHint: "city [state]",
		Where: command.Both, Source: "mcp:everything"}}})
	if _, ok := command.Find(h.m.cfg.Commands, "mcp__everything__args-prompt"); !ok {
		t.Errorf("the chat does not offer the MCP prompt")
	}
	if _, ok := command.Find(h.m.cfg.Commands, "help"); !ok {
		t.Errorf("the chat lost its own commands")
	}
	h.typeText("/args")
	if v := h.m.View().Content; !strings.Contains(v, "/mcp__everything__args-prompt") || !strings.Contains(v, "A prompt with two arguments") {
		t.Errorf("the palette does not offer the MCP prompt:\n%s", v)
	}
	h.send(key(tea.KeyEscape, 0))
	h.m.input.SetValue("/mcp__everything__args-prompt Paris")
	h.send(key(tea.KeyEnter, 0))
	h.settle()
	if len(es.asked) != 1 || es.asked[0] != "mcp__everything__args-prompt Paris" {
		t.Errorf("the host was asked %q", es.asked)
	}
	if len(h.sess.prompts) != 1 || h.sess.prompts[0] != "What's the weather in Paris?" {
		t.Errorf("the model got %q", h.sess.prompts)
	}
}
