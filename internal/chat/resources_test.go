package chat

import (
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/toolset"
)

// listingSession is a session with the reference "everything" server's
// resources.
type listingSession struct {
	*fakeSession
	lists int
}

func (l *listingSession) Resources(context.Context) ([]host.Resource, error) {
	l.lists++
	return []host.Resource{
		{Server: "everything", URI: "demo://resource/static/document/architecture.md", Name: "architecture.md", MIMEType: "text/markdown"},
		{Server: "everything", URI: "demo://resource/static/document/features.md", Name: "features.md", MIMEType: "text/markdown"},
		{Server: "everything", URI: "demo://resource/dynamic/text/{resourceId}", Template: true},
	}, nil
}

// TestResourceCompletion: @ offers the session's MCP resources as
// @SERVER:URI (not its templates) beside the workspace's files, listed once
// and in a command; the one chosen is left in the prompt for the host to
// attach, without a "not attached" note from the chat's file attachments.
func TestResourceCompletion(t *testing.T) {
	h := newHarness(t, 100)
	ls := &listingSession{fakeSession: h.sess}
	h.m.attach(Opened{Session: ls, Registry: toolset.New(toolset.Options{})})
	h.m.cfg.Files = func() []string { return []string{"docs/architecture.md", "main.go"} }
	h.typeText("summarise @")
	if ls.lists != 0 {
		t.Fatal("the resources were listed inside Update")
	}
	h.settle()
	h.frame("resource-completion")
	h.typeText("arch")
	h.frame("resource-completion-arch")
	if len(h.m.comp) != 2 {
		t.Fatalf("@arch offers %v", h.m.comp)
	}
	h.send(key(tea.KeyDown, 0), key(tea.KeyTab, 0)) // the file ranks first: its path is shorter
	want := "summarise @everything:demo://resource/static/document/architecture.md "
	if v := h.m.input.Value(); v != want {
		t.Fatalf("Tab completed to %q", v)
	}
	h.typeText("@ma")
	h.settle()
	if ls.lists != 1 {
		t.Errorf("the resources were listed %d times, want once per session", ls.lists)
	}
	h.send(key(tea.KeyEscape, 0))
	h.send(key(tea.KeyEnter, 0))
	h.settle()
	if len(ls.texts) != 1 || ls.texts[0] != want+"@ma" || len(ls.parts[0]) != 0 {
		t.Errorf("the host got %q with %v", ls.texts, ls.parts)
	}
	if p := h.printed.String(); strings.Contains(p, "not attached: @everything") {
		t.Errorf("the chat tried to attach the mention as a file:\n%s", p)
	}
}

// A note from the host (a mention it could not attach) is printed in the
// chat, not written across it.
func TestNoteMsg(t *testing.T) {
	h := newHarness(t, 100)
	h.send(NoteMsg("not attached: @everything:demo://x: MCP server everything: no such resource; the prompt is sent without it"))
	if p := h.printed.String(); !strings.Contains(p, "dsh: not attached: @everything:demo://x: MCP server everything: no such resource") {
		t.Errorf("printed:\n%s", p)
	}
}
