package mcp

// This file bounds what a server lists. A server is not trusted to be
// polite: one that pages forever, repeats a page, sends more items or bytes
// than a session can use, or takes too long, is cut off, and the cut is told
// (Options.Notice) rather than the session waiting or growing without end.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds on one listing of one server.
const (
	maxListPages   = 100
	maxTools       = 500
	maxToolsBytes  = 4 << 20   // the tools' JSON, all together
	maxToolBytes   = 256 << 10 // one tool's: a bigger one is left out
	maxDescription = 8 << 10   // a tool's description is cut to this
	listWait       = 30 * time.Second
)

// listPaged reads a listing page by page. keep says whether an item is
// kept, and why the listing must stop ("" to go on). The listing stops, and
// cut says why, at maxItems kept, maxListPages pages, a cursor seen before,
// or listWait.
func listPaged[T any](ctx context.Context, maxItems int, fetch func(ctx context.Context, cursor string) ([]T, string, error),
	keep func(T) (bool, string)) (out []T, cut string, err error) {
	ctx, cancel := context.WithTimeout(ctx, listWait)
	defer cancel()
	cursor, seen := "", map[string]bool{}
	for page := 0; ; page++ {
		if page == maxListPages {
			return out, fmt.Sprintf("it sent more than %d pages", maxListPages), nil
		}
		items, next, err := fetch(ctx, cursor)
		if err != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) && page > 0 {
				return out, fmt.Sprintf("it had not finished within %v", listWait), nil
			}
			return out, "", err
		}
		for _, it := range items {
			if len(out) == maxItems {
				return out, fmt.Sprintf("it offered more than %d", maxItems), nil
			}
			ok, stop := keep(it)
			if stop != "" {
				return out, stop, nil
			}
			if ok {
				out = append(out, it)
			}
		}
		if next == "" {
			return out, "", nil
		}
		if seen[next] {
			return out, "it sent a page twice", nil
		}
		seen[next], cursor = true, next
	}
}

// cutNote tells what of a listing was left out.
func cutNote(server, what, cut string, dropped int, why string) string {
	var parts []string
	if cut != "" {
		parts = append(parts, "only the first were taken: "+cut)
	}
	if dropped > 0 {
		parts = append(parts, fmt.Sprintf("%d were left out (%s)", dropped, why))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("MCP server %s, its %s: %s", server, what, strings.Join(parts, "; "))
}

// maxPrompts bounds the prompts taken from one server: they become commands.
const maxPrompts = 100

// promptName is a prompt name that can be a slash command as it is: 1 to 64
// of [A-Za-z0-9_.-]. (A regexp of it cost every dsh start 60 KB at init.)
func promptName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '.', c == '-':
		default:
			return false
		}
	}
	return true
}

// maxPromptArgs bounds a prompt's arguments.
const maxPromptArgs = 16

// list reads the server's tools and prompts, bounded, cleaned, and tells
// notice what was left out.
func (s *server) list(ctx context.Context, c *conn, notice func(server, msg string)) error {
	tell := func(msg string) {
		if msg != "" && notice != nil {
			notice(s.name, msg)
		}
	}
	if err := s.listTools(ctx, c, tell); err != nil {
		return err
	}
	s.listPrompts(ctx, c, tell)
	return nil
}

// listTools reads the server's tools, bounded and cleaned, in place of those
// it had.
func (s *server) listTools(ctx context.Context, c *conn, tell func(string)) error {
	total, big := 0, 0
	tools, cut, err := listPaged(ctx, maxTools, func(ctx context.Context, cursor string) ([]*sdk.Tool, string, error) {
		r, err := c.session.ListTools(ctx, &sdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return r.Tools, r.NextCursor, nil
	}, func(t *sdk.Tool) (bool, string) {
		if t == nil {
			return false, ""
		}
		b, err := json.Marshal(t)
		if err != nil || len(b) > maxToolBytes {
			big++
			return false, ""
		}
		if total += len(b); total > maxToolsBytes {
			return false, fmt.Sprintf("they came to more than %d bytes", maxToolsBytes)
		}
		t.Description = truncate(sanitiseText(t.Description), maxDescription)
		t.Title = Label(t.Title)
		if t.Annotations != nil {
			t.Annotations.Title = Label(t.Annotations.Title)
		}
		return true, ""
	})
	if err != nil {
		return fmt.Errorf("listing its tools: %w", c.explain(err))
	}
	s.mu.Lock()
	s.tools = tools
	s.mu.Unlock()
	tell(cutNote(s.name, "tools", cut, big, fmt.Sprintf("larger than %d bytes", maxToolBytes)))
	return nil
}

// listPrompts reads the server's prompts, bounded and cleaned, in place of
// those it had.
func (s *server) listPrompts(ctx context.Context, c *conn, tell func(string)) {
	if ir := c.session.InitializeResult(); ir == nil || ir.Capabilities == nil || ir.Capabilities.Prompts == nil {
		return
	}
	odd := 0
	prompts, cut, err := listPaged(ctx, maxPrompts, func(ctx context.Context, cursor string) ([]*sdk.Prompt, string, error) {
		r, err := c.session.ListPrompts(ctx, &sdk.ListPromptsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return r.Prompts, r.NextCursor, nil
	}, func(p *sdk.Prompt) (bool, string) {
		if p == nil || !promptName(p.Name) || len(p.Arguments) > maxPromptArgs {
			odd++
			return false, ""
		}
		for _, a := range p.Arguments {
			if a != nil && !promptName(a.Name) {
				odd++
				return false, ""
			}
		}
		p.Title, p.Description = Label(p.Title), Label(p.Description)
		for _, a := range p.Arguments {
			if a != nil {
				a.Description = Label(a.Description)
			}
		}
		return true, ""
	})
	if err != nil && s.life.Err() == nil {
		// Its tools still work; it offers no prompts.
		tell(fmt.Sprintf("MCP server %s: listing its prompts failed: %v", s.name, c.explain(err)))
	}
	s.mu.Lock()
	s.prompts = prompts
	s.mu.Unlock()
	tell(cutNote(s.name, "prompts", cut, odd, "a name that cannot be a command, or too many arguments"))
}

// changed answers a server's prompts/list_changed notifications, one
// listing at a time however many come: its prompts are listed again, and then
// told to done, so the session's commands follow.
func (s *server) changed(c *conn, notice func(server, msg string), done func()) {
	relist(&s.relisting, c, func() {
		s.listPrompts(s.life, c, s.teller(notice))
		if done != nil {
			done()
		}
	})
}

// toolsChanged answers a server's tools/list_changed notifications, like
// changed: its tools are listed again, and then told to done, which offers
// them to the model from its next call.
func (s *server) toolsChanged(c *conn, notice func(server, msg string), done func()) {
	relist(&s.retooling, c, func() {
		if err := s.listTools(s.life, c, s.teller(notice)); err != nil {
			if s.life.Err() == nil { // not the session ending under it
				s.teller(notice)(fmt.Sprintf("MCP server %s changed its tools, but listing them failed (%v); the model keeps those it had", s.name, err))
			}
			return
		}
		if done != nil {
			done()
		}
	})
}

func (s *server) teller(notice func(server, msg string)) func(string) {
	return func(msg string) {
		if msg != "" && notice != nil {
			notice(s.name, msg)
		}
	}
}

// relist runs list for a notification of c, one at a time however many come:
// those that came while it ran make it run once more. A notification may come
// while c is still being set up: list waits for it.
func relist(wanted *atomic.Int32, c *conn, list func()) {
	if wanted.Add(1) > 1 {
		return // the running listing goes round again
	}
	go func() {
		<-c.ready
		if c.session == nil {
			wanted.Store(0)
			return
		}
		for {
			list()
			if wanted.Add(-1) == 0 {
				return
			}
			wanted.Store(1) // the notifications that came meanwhile: one more listing
		}
	}()
}
