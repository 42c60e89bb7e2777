package script

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-dev/dsh/internal/provider"
)

const sample = `{"turns": [
  {"thinking": "Read the file first.", "text": "Let me look.",
   "tool_calls": [{"id": "r1", "name": "read", "args": {"path": "main.go"}}, {"name": "job_list"}]},
  {"text": "Now I edit.", "tool_calls": [{"name": "edit", "args": {"path": "main.go", "old_string": "a", "new_string": "b"}}]},
  {"text": "Done."}
]}`

func stream(t *testing.T, s *Script) (*provider.Response, []provider.Delta) {
	t.Helper()
	var ds []provider.Delta
	resp, err := s.Stream(context.Background(), provider.Request{}, func(d provider.Delta) { ds = append(ds, d) })
	if err != nil {
		t.Fatal(err)
	}
	return resp, ds
}

func TestPlayback(t *testing.T) {
	s, err := Load(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name() != "script" {
		t.Errorf("name %q", s.Name())
	}

	resp, ds := stream(t, s)
	want := []provider.Part{
		{Type: provider.PartThinking, Text: "Read the file first."},
		{Type: provider.PartText, Text: "Let me look."},
		{Type: provider.PartToolUse, ID: "r1", Name: "read", Args: []byte(`{"path": "main.go"}`)},
		{Type: provider.PartToolUse, ID: "call_2", Name: "job_list", Args: []byte(`{}`)},
	}
	if !reflect.DeepEqual(resp.Message.Parts, want) {
		t.Errorf("turn 1 parts:\n got %+v\nwant %+v", resp.Message.Parts, want)
	}
	if resp.Message.Role != provider.RoleAssistant || resp.StopReason != provider.StopToolUse {
		t.Errorf("role %q stop %q", resp.Message.Role, resp.StopReason)
	}
	// Deltas arrive in several pieces that add up to the thinking, then the text.
	var thinking, text strings.Builder
	nText := 0
	for i, d := range ds {
		switch d.Type {
		case provider.DeltaThinking:
			if text.Len() > 0 {
				t.Errorf("delta %d: thinking after text", i)
			}
			thinking.WriteString(d.Text)
		case provider.DeltaText:
			nText++
			text.WriteString(d.Text)
		}
	}
	if thinking.String() != "Read the file first." || text.String() != "Let me look." || nText < 2 {
		t.Errorf("deltas %+v", ds)
	}

	resp, _ = stream(t, s)
	if id := resp.Message.Parts[1].ID; id != "call_3" {
		t.Errorf("turn 2 call id %q, want call_3", id)
	}
	resp, _ = stream(t, s)
	if resp.StopReason != provider.StopEndTurn || len(resp.Message.Parts) != 1 || resp.Message.Parts[0].Text != "Done." {
		t.Errorf("turn 3 %+v", resp)
	}
	for range 2 {
		resp, ds = stream(t, s)
		wantEnd := []provider.Part{{Type: provider.PartText, Text: Finished}}
		if resp.StopReason != provider.StopEndTurn || !reflect.DeepEqual(resp.Message.Parts, wantEnd) {
			t.Errorf("after the script %+v", resp)
		}
		if len(ds) == 0 {
			t.Error("no deltas for the finished message")
		}
	}
}

func TestArgsAreNotShared(t *testing.T) {
	s, err := Parse([]byte(`{"turns":[{"tool_calls":[{"name":"read","args":{"path":"a"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, _ := stream(t, s)
	resp.Message.Parts[0].Args[2] = 'X' // a consumer scribbling on its copy
	if got := string(s.turns[0].ToolCalls[0].Args); got != `{"path":"a"}` {
		t.Errorf("the script's args changed to %s", got)
	}
}

func TestChunks(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a", []string{"a"}},
		{"abcd", []string{"ab", "cd"}},
		{"abcdefg", []string{"abc", "def", "g"}},
		{"héllo wörld", []string{"héll", "o wö", "rld"}},
	}
	for _, tt := range tests {
		if got := chunks(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("chunks(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"unknown field", "{\"turns\": [\n  {\"text\": \"hi\", \"txt\": \"typo\"}\n]}",
			`script: line 2, column 18: unknown field "txt" (at /turns/0/txt)`},
		{"unknown tool call field", `{"turns":[{"tool_calls":[{"name":"read","arguments":{}}]}]}`,
			`script: line 1, column 41: unknown field "arguments" (at /turns/0/tool_calls/0/arguments)`},
		{"unknown top-level field", `{"turns":[{"text":"x"}],"version":2}`,
			`script: line 1, column 25: unknown field "version" (at /version)`},
		{"wrong type", `{"turns":[{"delay_ms":"soon"}]}`,
			`script: line 1, column 23: expected an integer, got a string (at /turns/0/delay_ms)`},
		{"wrong type bool", `{"turns":[{"text":"a","wait_for_cancel":"yes"}]}`,
			`script: line 1, column 41: expected true or false, got a string (at /turns/0/wait_for_cancel)`},
		{"turns not a list", `{"turns":{"text":"a"}}`,
			`script: line 1, column 10: expected an array, got an object (at /turns)`},
		{"numeric name", `{"turns":[{"tool_calls":[{"name":5}]}]}`,
			`script: line 1, column 34: expected a string, got a number (at /turns/0/tool_calls/0/name)`},
		{"not an object", `[]`, `script: line 1, column 1: expected an object {"turns": [...]}, got an array`},
		{"syntax", "{\"turns\": [\n{\"text\": \"a\",}]}",
			`script: line 2, column 13: invalid character ',' at start of value (at /turns/0)`},
		{"duplicate field", `{"turns":[{"text":"a","text":"b"}]}`,
			`script: line 1, column 23: duplicate field "text" (at /turns/0/text)`},
		{"trailing garbage", `{"turns":[{"text":"a"}]} x`,
			`script: line 1, column 26: invalid character 'x' after top-level value`},
		{"no turns", `{"turns":[]}`, `script: no turns: expected {"turns": [...]} with at least one turn`},
		{"missing turns", `{}`, `script: no turns: expected {"turns": [...]} with at least one turn`},
		{"empty turn", `{"turns":[{"text":"a"},{}]}`,
			`script: /turns/1: empty turn: give thinking, text, tool_calls, wait_for_cancel or echo_request`},
		{"negative delay", `{"turns":[{"text":"a","delay_ms":-5}]}`, `script: /turns/0/delay_ms: must not be negative`},
		{"nameless call", `{"turns":[{"tool_calls":[{"args":{}}]}]}`, `script: /turns/0/tool_calls/0: name is required`},
		{"array args", `{"turns":[{"tool_calls":[{"name":"read","args":[1]}]}]}`,
			`script: /turns/0/tool_calls/0/args: must be a JSON object`},
		{"duplicate id", `{"turns":[{"tool_calls":[{"id":"x","name":"a"}]},{"tool_calls":[{"id":"x","name":"b"}]}]}`,
			`script: /turns/1/tool_calls/0/id: duplicate tool call id "x" (first used at /turns/0/tool_calls/0)`},
		{"given id collides with a generated one", `{"turns":[{"tool_calls":[{"name":"a"},{"id":"call_1","name":"b"}]}]}`,
			`script: /turns/0/tool_calls/1/id: duplicate tool call id "call_1" (first used at /turns/0/tool_calls/0)`},
		{"wait with calls", `{"turns":[{"wait_for_cancel":true,"tool_calls":[{"name":"a"}]}]}`,
			`script: /turns/0: a turn that waits for cancel cannot make tool calls`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse([]byte(tt.in))
			if s != nil || err == nil {
				t.Fatalf("accepted: %+v", s)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got %s\nwant %s", err, tt.want)
			}
		})
	}
}

func TestWaitForCancel(t *testing.T) {
	s, err := Parse([]byte(`{"turns":[{"text":"working on it","wait_for_cancel":true},{"text":"next"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var got strings.Builder
	// Cancel once the whole text has streamed: the turn must then give up.
	resp, err := s.Stream(ctx, provider.Request{}, func(d provider.Delta) {
		got.WriteString(d.Text)
		if got.String() == "working on it" {
			cancel()
		}
	})
	if resp != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("resp %v err %v", resp, err)
	}
	resp, _ = stream(t, s)
	if resp.Message.Parts[0].Text != "next" {
		t.Errorf("the turn after a cancelled one: %+v", resp)
	}
}

func TestDelayHonoursCancel(t *testing.T) {
	s, err := Parse([]byte(`{"turns":[{"text":"late","delay_ms":3600000}]}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	resp, err := s.Stream(ctx, provider.Request{}, nil)
	if resp != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("resp %v err %v", resp, err)
	}
}

func TestConcurrentCallsTakeDistinctTurns(t *testing.T) {
	s, err := Parse([]byte(`{"turns":[{"text":"1"},{"text":"2"},{"text":"3"},{"text":"4"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var texts []string
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			resp, err := s.Stream(context.Background(), provider.Request{}, nil)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			texts = append(texts, resp.Message.Parts[0].Text)
			mu.Unlock()
		})
	}
	wg.Wait()
	sort.Strings(texts)
	if !reflect.DeepEqual(texts, []string{"1", "2", "3", "4"}) {
		t.Errorf("turns taken %v", texts)
	}
}

func TestEchoRequest(t *testing.T) {
	s, err := Parse([]byte(`{"turns": [{"echo_request": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.Stream(context.Background(), provider.Request{Messages: []provider.Message{
		{Role: provider.RoleUser, Parts: []provider.Part{{Type: provider.PartText, Text: "first"}}},
		{Role: provider.RoleAssistant, Parts: []provider.Part{{Type: provider.PartText, Text: "one"}, {Type: provider.PartToolUse, Name: "bash"}}},
		{Role: provider.RoleUser, Parts: []provider.Part{{Type: provider.PartText, Text: "second"}}},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := resp.Message.Parts[0].Text, "user: first\nassistant: one\nuser: second\n"; got != want {
		t.Errorf("echo = %q, want %q", got, want)
	}
}
