// Package script is a provider that plays back a fixed list of assistant turns
// from JSON. It drives the tests and `dsh demo`, so it needs no network and no key:
//
//	{"turns": [
//	  {"thinking": "…", "text": "…", "tool_calls": [{"id": "…", "name": "read", "args": {…}}]},
//	  {"text": "…", "delay_ms": 200, "input_tokens": 1200, "output_tokens": 40},
//	  {"text": "…", "wait_for_cancel": true},
//	  {"echo_request": true}
//	]}
//
// Each Stream call answers with the next turn; once the turns run out, every
// call answers "(script finished)".
package script

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/provider"
)

// Finished is the text of the answer given once the script has run out.
const Finished = "(script finished)"

// Turn is one scripted assistant message.
type Turn struct {
	Thinking  string     `json:"thinking,omitempty"`
	Text      string     `json:"text,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// DelayMS waits this long before the turn starts streaming.
	DelayMS int `json:"delay_ms,omitzero"`
	// WaitForCancel streams the turn's thinking and text, then blocks until the
	// request is cancelled and returns the context's error: a model that never
	// finishes, for testing cancellation.
	WaitForCancel bool `json:"wait_for_cancel,omitzero"`
	// InputTokens and OutputTokens are the usage the turn reports.
	InputTokens  int64 `json:"input_tokens,omitzero"`
	OutputTokens int64 `json:"output_tokens,omitzero"`
	// EchoRequest answers with what the request held, so a test can check what
	// the model was sent (a resumed session's earlier turns): one line per
	// message, "ROLE: TEXT" with the text parts joined by " ".
	EchoRequest bool `json:"echo_request,omitzero"`
	// EchoSettings answers with the request's settings, so a test can check
	// what a session was configured with: "model=M thinking=T tools=A,B,…".
	EchoSettings bool `json:"echo_settings,omitzero"`
	// Match makes the turn answer only a request whose first user message
	// contains it (a subagent's task), so that sessions sharing the script —
	// subagents running at once — each get their own turns in order. A
	// request takes the first unused turn it matches, else the first unused
	// turn without Match.
	Match string `json:"match,omitempty"`
}

// ToolCall is one scripted tool call. Args defaults to {}; ID to "call_N", N
// counting the script's tool calls from 1.
type ToolCall struct {
	ID   string         `json:"id,omitempty"`
	Name string         `json:"name"`
	Args jsontext.Value `json:"args,omitzero"`
}

// Script is a provider.Provider that plays its turns in order. It is safe for
// concurrent use; each call takes the next turn.
type Script struct {
	turns []Turn

	mu   sync.Mutex
	used []bool
}

type file struct {
	Turns []Turn `json:"turns"`
}

// Load reads and validates a script.
func Load(r io.Reader) (*Script, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	return Parse(data)
}

// Parse validates a script strictly: unknown or repeated fields, wrong types,
// calls without a name, arguments that are not an object and duplicate ids are
// errors that say where they are.
func Parse(data []byte) (*Script, error) {
	var f file
	if err := json.Unmarshal(data, &f, json.RejectUnknownMembers(true)); err != nil {
		return nil, decodeError(data, err)
	}
	if len(f.Turns) == 0 {
		return nil, errors.New(`script: no turns: expected {"turns": [...]} with at least one turn`)
	}
	seen := map[string]string{} // id → where it was first used
	n := 0
	for i := range f.Turns {
		t := &f.Turns[i]
		at := fmt.Sprintf("/turns/%d", i)
		if t.Thinking == "" && t.Text == "" && len(t.ToolCalls) == 0 && !t.WaitForCancel && !t.EchoRequest && !t.EchoSettings {
			return nil, fmt.Errorf("script: %s: empty turn: give thinking, text, tool_calls, wait_for_cancel or echo_request", at)
		}
		if t.DelayMS < 0 {
			return nil, fmt.Errorf("script: %s/delay_ms: must not be negative", at)
		}
		if t.InputTokens < 0 || t.OutputTokens < 0 {
			return nil, fmt.Errorf("script: %s: token counts must not be negative", at)
		}
		if t.WaitForCancel && len(t.ToolCalls) > 0 {
			return nil, fmt.Errorf("script: %s: a turn that waits for cancel cannot make tool calls", at)
		}
		for j := range t.ToolCalls {
			c := &t.ToolCalls[j]
			n++
			at := fmt.Sprintf("%s/tool_calls/%d", at, j)
			if c.Name == "" {
				return nil, fmt.Errorf("script: %s: name is required", at)
			}
			if len(c.Args) == 0 {
				c.Args = jsontext.Value(`{}`)
			}
			if c.Args.Kind() != '{' {
				return nil, fmt.Errorf("script: %s/args: must be a JSON object", at)
			}
			if c.ID == "" {
				c.ID = fmt.Sprintf("call_%d", n)
			}
			if first, dup := seen[c.ID]; dup {
				return nil, fmt.Errorf("script: %s/id: duplicate tool call id %q (first used at %s)", at, c.ID, first)
			}
			seen[c.ID] = at
		}
	}
	return &Script{turns: f.Turns, used: make([]bool, len(f.Turns))}, nil
}

// decodeError says where in data a decoding error is, as line and column.
func decodeError(data []byte, err error) error {
	var sem *json.SemanticError
	var syn *jsontext.SyntacticError
	var off int64
	var msg string
	switch {
	case errors.As(err, &syn):
		off = syn.ByteOffset
		p := syn.JSONPointer
		switch {
		case errors.Is(syn.Err, jsontext.ErrDuplicateName):
			msg = fmt.Sprintf("duplicate field %q (at %s)", p.LastToken(), p)
		case p != "":
			msg = fmt.Sprintf("%s (at %s)", syn.Err, p)
		default:
			msg = syn.Err.Error()
		}
	case errors.As(err, &sem):
		off = sem.ByteOffset
		p := sem.JSONPointer
		switch {
		case errors.Is(sem.Err, json.ErrUnknownName):
			msg = fmt.Sprintf("unknown field %q (at %s)", p.LastToken(), p)
		case sem.GoType != nil:
			msg = fmt.Sprintf("expected %s, got %s", describeType(sem.GoType), describeKind(sem.JSONKind))
			if p != "" {
				msg += fmt.Sprintf(" (at %s)", p)
			}
		default:
			msg = err.Error()
		}
	default:
		return fmt.Errorf("script: %w", err)
	}
	line, col := position(data, off)
	return fmt.Errorf("script: line %d, column %d: %s", line, col, msg)
}

func position(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = 1 + strings.Count(string(before), "\n")
	col = int(off) - strings.LastIndexByte(string(before), '\n')
	return line, col
}

// kindNames and jsonKindNames word Go and JSON kinds for type mismatches.
var (
	kindNames = map[reflect.Kind]string{
		reflect.String: "a string",
		reflect.Int:    "an integer",
		reflect.Bool:   "true or false",
		reflect.Slice:  "an array",
		reflect.Struct: "an object",
	}
	jsonKindNames = map[jsontext.Kind]string{
		jsontext.KindString:      "a string",
		jsontext.KindNumber:      "a number",
		jsontext.KindTrue:        "a boolean",
		jsontext.KindFalse:       "a boolean",
		jsontext.KindNull:        "null",
		jsontext.KindBeginObject: "an object",
		jsontext.KindBeginArray:  "an array",
	}
)

func describeType(t reflect.Type) string {
	if t == reflect.TypeFor[file]() {
		return `an object {"turns": [...]}`
	}
	if name, ok := kindNames[t.Kind()]; ok {
		return name
	}
	return t.String()
}

func describeKind(k jsontext.Kind) string {
	if name, ok := jsonKindNames[k]; ok {
		return name
	}
	return "something else"
}

// Fresh is a Script of the same turns, none of them played yet; the turns,
// which nothing changes, are shared.
func (s *Script) Fresh() *Script {
	return &Script{turns: s.turns, used: make([]bool, len(s.turns))}
}

// Name implements provider.Provider.
func (s *Script) Name() string { return "script" }

// Stream implements provider.Provider: it answers with the next turn, streaming
// its thinking and text in a few deltas.
func (s *Script) Stream(ctx context.Context, req provider.Request, onDelta func(provider.Delta)) (*provider.Response, error) {
	s.mu.Lock()
	turn := Turn{Text: Finished}
	if i := s.pick(firstUser(req)); i >= 0 {
		turn = s.turns[i]
		s.used[i] = true
	}
	s.mu.Unlock()
	if turn.EchoSettings {
		names := make([]string, len(req.Tools))
		for i, t := range req.Tools {
			names[i] = t.Name
		}
		turn.Text = fmt.Sprintf("model=%s thinking=%s tools=%s", req.Model, req.Thinking, strings.Join(names, ","))
	}
	if turn.EchoRequest {
		turn.Text = echo(req)
	}

	if turn.DelayMS > 0 {
		timer := time.NewTimer(time.Duration(turn.DelayMS) * time.Millisecond)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if onDelta != nil {
		for _, c := range chunks(turn.Thinking) {
			onDelta(provider.Delta{Type: provider.DeltaThinking, Text: c})
		}
		for _, c := range chunks(turn.Text) {
			onDelta(provider.Delta{Type: provider.DeltaText, Text: c})
		}
	}
	if turn.WaitForCancel {
		<-ctx.Done()
		return nil, ctx.Err()
	}

	var parts []provider.Part
	if turn.Thinking != "" {
		parts = append(parts, provider.Part{Type: provider.PartThinking, Text: turn.Thinking})
	}
	if turn.Text != "" {
		parts = append(parts, provider.Part{Type: provider.PartText, Text: turn.Text})
	}
	stop := provider.StopEndTurn
	for _, c := range turn.ToolCalls {
		parts = append(parts, provider.Part{Type: provider.PartToolUse, ID: c.ID, Name: c.Name, Args: c.Args.Clone()})
		stop = provider.StopToolUse
	}
	return &provider.Response{
		Message:      provider.Message{Role: provider.RoleAssistant, Parts: parts},
		StopReason:   stop,
		InputTokens:  turn.InputTokens,
		OutputTokens: turn.OutputTokens,
	}, nil
}

// echo describes the request's messages, one line each.
func echo(req provider.Request) string {
	var b strings.Builder
	for _, m := range req.Messages {
		var texts []string
		for _, p := range m.Parts {
			if p.Type == provider.PartText && p.Text != "" {
				texts = append(texts, p.Text)
			}
		}
		fmt.Fprintf(&b, "%s: %s\n", m.Role, strings.Join(texts, " "))
	}
	return b.String()
}

// chunks splits s into at most three pieces on rune boundaries, so consumers see
// text arrive the way a real stream delivers it.
func chunks(s string) []string {
	runes := []rune(s)
	if len(runes) == 0 {
		return nil
	}
	size := (len(runes) + 2) / 3
	var out []string
	for len(runes) > 0 {
		n := min(size, len(runes))
		out = append(out, string(runes[:n]))
		runes = runes[n:]
	}
	return out
}

// pick is the turn a request whose first user message is first takes, -1
// when none is left. The caller holds s.mu.
func (s *Script) pick(first string) int {
	plain := -1
	for i, t := range s.turns {
		switch {
		case s.used[i]:
		case t.Match != "" && strings.Contains(first, t.Match):
			return i
		case t.Match == "" && plain < 0:
			plain = i
		}
	}
	return plain
}

func firstUser(req provider.Request) string {
	for _, m := range req.Messages {
		if m.Role != provider.RoleUser {
			continue
		}
		var b strings.Builder
		for _, p := range m.Parts {
			if p.Type == provider.PartText {
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return ""
}
