package chat

import (
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/session"
)

// A bad argument gets the host's reply, word for word, as in the editor (whose
// test sends the same commands): the chat only renders what the host's one
// validation said.
func TestCommandRepliesAreTheHosts(t *testing.T) {
	bad := []struct{ name, args string }{
		{"model", "gpt-unknown"},
		{"model", "claude-haiku-4-5 lots"},
		{"mode", "sometimes"},
		{"mode", "auto"},
	}
	p, err := script.Parse([]byte(`{"turns": [{"text": "unused"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	opts := func() host.Options {
		return host.Options{SessionDir: t.TempDir(), Root: t.TempDir(), Model: "claude-sonnet-4-5",
			Provider: func() (provider.Provider, error) { return p, nil }}
	}
	ref, err := host.Create(opts())
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	var opened *host.Session
	stream := make(chan host.Event, 64)
	h := &harness{t: t}
	h.m = New(Config{Root: t.TempDir(), Model: "claude-sonnet-4-5", Width: 1000, Height: 30,
		History: &History{},
		Print:   func(s string) { h.printed.WriteString(s + "\n") },
		Open: func(string, Replay) (Opened, error) {
			s, err := host.Create(opts())
			if err != nil {
				return Opened{}, err
			}
			opened = s
			// The host's stream, which the test hands to the chat itself.
			s.Subscribe(func(e host.Event) { stream <- e })
			return Opened{Session: s, Registry: s.Registry()}, nil
		}}, Opened{})
	defer func() {
		if opened != nil {
			_ = opened.Close()
		}
	}()
	for _, c := range bad {
		want, err := ref.Submit(context.Background(), host.Input{Text: "/" + c.name + " " + c.args, Where: host.Both})
		if err != nil {
			t.Fatal(err)
		}
		h.typeText("/" + c.name + " " + c.args)
		h.send(key(tea.KeyEnter, 0))
		// The session opens (the first time), the command runs, its record
		// comes back on the stream.
		h.settle() // the session opens (the first time), the command runs
		for e := range stream {
			h.events(e)
			if e.Kind == host.KindRecord && e.Record.Type == session.TypeReply {
				break
			}
		}
		if !strings.Contains(h.printed.String(), "· "+want.Text+"\n") {
			t.Errorf("/%s %s: the chat printed\n%s\nwant the host's reply %q", c.name, c.args, h.printed.String(), want.Text)
		}
	}
}

// /mode that changes the mode is confirmed once: by the mode record the change
// logs, not again by the command's reply.
func TestModeChangeShowsOnce(t *testing.T) {
	p, err := script.Parse([]byte(`{"turns": [{"text": "unused"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var opened *host.Session
	events := make(chan host.Event, 64)
	h := &harness{t: t}
	h.m = New(Config{Root: t.TempDir(), Model: "claude-sonnet-4-5", Width: 100, Height: 30,
		History: &History{},
		Print:   func(s string) { h.printed.WriteString(s + "\n") },
		Open: func(string, Replay) (Opened, error) {
			s, err := host.Create(host.Options{SessionDir: t.TempDir(), Root: t.TempDir(),
				Provider: func() (provider.Provider, error) { return p, nil }})
			if err != nil {
				return Opened{}, err
			}
			opened = s
			s.Subscribe(func(e host.Event) { events <- e })
			return Opened{Session: s, Registry: s.Registry()}, nil
		}}, Opened{})
	defer func() {
		if opened != nil {
			_ = opened.Close()
		}
	}()
	h.typeText("/mode accept-edits")
	h.send(key(tea.KeyEnter, 0))
	h.settle() // the session opens, the command runs
	// The session's events, as the host streams them, until the mode record.
	for e := range events {
		h.events(e)
		if e.Kind == host.KindRecord && e.Record.Type == session.TypeMode {
			break
		}
	}
	if n := strings.Count(strings.ToLower(h.printed.String()), "permission mode: accept-edits"); n != 1 {
		t.Errorf("the mode change shows %d times:\n%s", n, h.printed.String())
	}
}
