package tool

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/card"
)

type echoParams struct {
	Path  string `json:"path" jsonschema:"description=A path"`
	Count int    `json:"count,omitempty" jsonschema:"minimum=1"`
}

func echoTool() Tool {
	return New(Spec[echoParams, NoMeta]{
		Name: "echo", Description: "echoes", ReadOnly: true, Kind: card.ToolRead,
		Execute: func(_ context.Context, _ Env, p echoParams, _ *NoMeta) (Result, *NoMeta, error) {
			return Text(strings.Repeat(p.Path, max(p.Count, 1))), nil, nil
		},
		PresentCall: func(p echoParams, _ *NoMeta) card.Call { return &card.GenericCall{Title: "Echo " + p.Path} },
		PresentResult: func(p echoParams, r Result, _ *NoMeta) card.Result {
			if r.IsError {
				return nil
			}
			return &card.GenericResult{Title: p.Path, Content: r.Content}
		},
	})
}

func TestRegistryRun(t *testing.T) {
	reg := NewRegistry(echoTool())
	tests := []struct {
		name, tool, args string
		wantErr          bool
		want             string // substring of the result text
	}{
		{"ok", "echo", `{"path":"ab","count":2}`, false, "abab"},
		{"optional omitted", "echo", `{"path":"x"}`, false, "x"},
		{"unknown tool", "ech", `{}`, true, `Unknown tool "ech". Available tools: echo.`},
		{"missing field", "echo", `{}`, true, `missing properties: ["path"]`},
		{"wrong type", "echo", `{"path":3}`, true, `at path: type: 3 has type "integer", want "string"`},
		{"below minimum", "echo", `{"path":"a","count":0}`, true, "is less than 1"},
		{"unknown field", "echo", `{"path":"a","bogus":1}`, true, `unexpected additional properties ["bogus"]`},
		{"not json", "echo", `{"path":`, true, "not valid JSON"},
		{"array", "echo", `[]`, true, `want "object"`},
		{"empty means {}", "echo", ``, true, `missing properties: ["path"]`},
	}
	// Twice, and each after the others: the arguments that passed last are
	// not checked again, and that must not let other arguments through.
	for round := range 2 {
		for _, tt := range tests {
			t.Run(fmt.Sprint(tt.name, round), func(t *testing.T) {
				for range 2 {
					r := res(reg.Run(context.Background(), Env{}, tt.tool, []byte(tt.args), nil))
					if r.IsError != tt.wantErr {
						t.Errorf("IsError = %v, want %v (%q)", r.IsError, tt.wantErr, r.TextOf())
					}
					if !strings.Contains(r.TextOf(), tt.want) {
						t.Errorf("result %q does not contain %q", r.TextOf(), tt.want)
					}
				}
			})
		}
	}
}

func TestRegistryPresent(t *testing.T) {
	reg := NewRegistry(echoTool())
	// The presenter leaves the kind out; the framework puts the spec's on.
	if c := reg.PresentCall("echo", []byte(`{"path":"p"}`), nil).(*card.GenericCall); c.Title != "Echo p" || c.ToolKind != card.ToolRead {
		t.Errorf("call card %#v", c)
	}
	// Bad arguments still give a card that shows them raw.
	c := reg.PresentCall("echo", []byte(`{"path":1}`), nil).(*card.GenericCall)
	if c.Title != "echo" || string(c.RawInput) != `{"path":1}` {
		t.Errorf("bad-args call card %#v", c)
	}
	if c := reg.PresentCall("nope", []byte(`not json`), nil).(*card.GenericCall); c.RawInput != nil || c.Title != "nope" {
		t.Errorf("unknown tool card %#v", c)
	}
	if r := reg.PresentResult("echo", []byte(`{"path":1}`), Text("x")); r != nil {
		t.Errorf("bad args gave result card %#v", r)
	}
	// An unknown tool (an MCP server's, replayed without it) is presented as a
	// dynamic tool is: its content.
	if r, ok := reg.PresentResult("nope", []byte(`{}`), Text("x")).(*card.GenericResult); !ok || r.Content[0].Text != "x" {
		t.Errorf("unknown tool gave result card %#v", r)
	}
	if r := reg.PresentResult("echo", []byte(`{"path":"p"}`), Text("x")); r == nil || r.(*card.GenericResult).Title != "p" {
		t.Errorf("result card %#v", r)
	}
}

// A logged call is presented without validating it again (it was validated
// before it ran, and a replay presents thousands): arguments beyond a bound
// still get the tool's card, while arguments that lack a required member or do
// not decode get a generic one.
func TestPresentCallTrustsLoggedArguments(t *testing.T) {
	reg := NewRegistry(echoTool())
	if c := reg.PresentCall("echo", []byte(`{"path":"p","count":0}`), nil).(*card.GenericCall); c.Title != "Echo p" {
		t.Errorf("a count below the schema's minimum gave %#v, want the tool's card", c)
	}
	for _, args := range []string{`{"count":2}`, `{}`, ``, `{"path":"p","path":"q"}`, `{"path":"p","extra":1}`} {
		if c := reg.PresentCall("echo", []byte(args), nil).(*card.GenericCall); c.Title != "echo" {
			t.Errorf("%s gave %#v, want a generic card", args, c)
		}
	}
}

func TestSchemaGeneratedFromType(t *testing.T) {
	s := string(echoTool().Schema())
	for _, want := range []string{`"required":["path"]`, `"additionalProperties":false`, `"description":"A path"`, `"minimum":1`} {
		if !strings.Contains(s, want) {
			t.Errorf("schema %s lacks %s", s, want)
		}
	}
}

// noSchema's parameters have no JSON schema: a channel.
type noSchema struct {
	C chan int `json:"c"`
}

// A tool's schema is built when first needed, not when the tool is made: a
// process that runs one call (dsh tool) builds that tool's schema only. The
// programming error of a type without one shows on that first need.
func TestSchemaBuiltOnFirstNeed(t *testing.T) {
	tl := New(Spec[noSchema, NoMeta]{Name: "bad", Execute: func(context.Context, Env, noSchema, *NoMeta) (Result, *NoMeta, error) {
		return Text("ran"), nil, nil
	}})
	defer func() {
		if recover() == nil {
			t.Error("Schema of a type without one did not panic")
		}
	}()
	_ = tl.Schema()
}

func TestDuplicateToolPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("duplicate registration did not panic")
		}
	}()
	NewRegistry(echoTool(), echoTool())
}

type closer struct {
	name  string
	order *[]string
	err   error
}

func (c *closer) Close() error { *c.order = append(*c.order, c.name); return c.err }

func TestSessionStateAndClose(t *testing.T) {
	s := NewSession("s1", nil)
	var order []string
	type keyA struct{}
	type keyB struct{}
	a := s.State(keyA{}, func() any { return &closer{name: "a", order: &order} })
	if again := s.State(keyA{}, func() any { t.Fatal("init ran twice"); return nil }); again != a {
		t.Error("State returned a different value for the same key")
	}
	boom := errors.New("boom")
	s.State(keyB{}, func() any { return &closer{name: "b", order: &order, err: boom} })
	if err := s.Close(); !errors.Is(err, boom) {
		t.Errorf("Close = %v, want boom", err)
	}
	if strings.Join(order, ",") != "b,a" {
		t.Errorf("close order %v, want b,a", order)
	}
	if err := s.Close(); err != nil || len(order) != 2 {
		t.Errorf("second Close = %v, closed %v", err, order)
	}
}

type closerState struct{ closed bool }

func (c *closerState) Close() error { c.closed = true; return nil }

// State made after Close (a call still running when the session ended) is
// closed at once, so nothing it would start outlives the session.
func TestStateAfterCloseIsClosed(t *testing.T) {
	s := NewSession("s", nil)
	before := s.State("a", func() any { return &closerState{} }).(*closerState)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !before.closed {
		t.Error("Close left state open")
	}
	late := s.State("b", func() any { return &closerState{} }).(*closerState)
	if !late.closed {
		t.Error("state made after Close was left open")
	}
}

// A call still running when the session closes may add state while Close goes
// through what exists (go test -race saw Close read the map unlocked; a
// concurrent map write is fatal to the whole process).
func TestStateDuringCloseRaces(t *testing.T) {
	for range 20 {
		s := NewSession("s", nil)
		for i := range 8 {
			s.State(i, func() any { return &closerState{} })
		}
		added := make(chan struct{})
		go func() {
			defer close(added)
			for i := range 64 {
				s.State(100+i, func() any { return &closerState{} })
			}
		}()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		<-added
	}
}
