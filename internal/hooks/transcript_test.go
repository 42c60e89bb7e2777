package hooks

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// bashShape names calls as Claude Code's Bash, as the host's shaper does.
type bashShape struct{}

func (bashShape) HookCall(name string, args jsontext.Value) (string, jsontext.Value) {
	if name == "bash" {
		return "Bash", args
	}
	return name, args
}

func (bashShape) HookResponse(name string, _ jsontext.Value, r tool.Result) jsontext.Value {
	if name != "bash" {
		return nil
	}
	b, _ := json.Marshal(map[string]any{"stdout": r.TextOf(), "stderr": "", "interrupted": false, "isImage": false}, json.Deterministic(true))
	return b
}

// line is what the tests read of a transcript line.
type line struct {
	ParentUUID    *string        `json:"parentUuid"`
	UUID          string         `json:"uuid"`
	SessionID     string         `json:"sessionId"`
	Type          string         `json:"type"`
	Cwd           string         `json:"cwd"`
	ToolUseResult map[string]any `json:"toolUseResult"`
	Message       struct {
		Role    string         `json:"role"`
		Content jsontext.Value `json:"content"`
	} `json:"message"`
}

func readTranscript(t *testing.T, path string) (raw []string, lines []line) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		raw, lines = append(raw, sc.Text()), append(lines, l)
	}
	return raw, lines
}

// lastAssistantText is what the popular "keep going" Stop hook reads: the
// text blocks of the last line holding "role":"assistant".
func lastAssistantText(raw []string) string {
	for i := len(raw) - 1; i >= 0; i-- {
		if !strings.Contains(raw[i], `"role":"assistant"`) {
			continue
		}
		var l struct {
			Message struct {
				Content []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
			} `json:"message"`
		}
		_ = json.Unmarshal([]byte(raw[i]), &l)
		var out []string
		for _, c := range l.Message.Content {
			if c.Type == "text" {
				out = append(out, c.Text)
			}
		}
		return strings.Join(out, "\n")
	}
	return ""
}

// The transcript holds the log's conversation in Claude Code's format, each
// line linked to the one before; Sync appends what the log gained and leaves
// what it wrote before as it was; it is the user's alone, beside the log.
func TestTranscript(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	log, err := session.Create(dir, session.NewID(now), "/work", session.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = log.Close() }()
	put := func(rs ...session.Record) {
		for _, r := range rs {
			if err := log.Append(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	put(session.Record{Type: session.TypeUser, Text: "list the files"},
		session.Record{Type: session.TypeThinking, Text: "ls will do", Signature: "sig"},
		session.Record{Type: session.TypeAssistant, Text: "Listing."},
		session.Record{Type: session.TypeToolCall, CallID: "toolu_1", Name: "bash", Args: jsontext.Value(`{"command":"ls"}`)},
		session.Record{Type: session.TypeToolResult, CallID: "toolu_1", Result: &tool.Result{Content: []card.Content{card.Text("a.go\n")}}},
		session.Record{Type: session.TypeAssistant, Text: "One file: a.go. Not done yet."},
		session.Record{Type: session.TypeTurnEnd, StopReason: "end_turn"})
	tr := NewTranscript(log.Path(), "claude-test", bashShape{})
	if err := tr.Sync(); err != nil {
		t.Fatal(err)
	}
	if tr.Path() != filepath.Join(dir, "transcripts", filepath.Base(log.Path())) {
		t.Errorf("path %s", tr.Path())
	}
	if fi, err := os.Stat(tr.Path()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v (%v)", fi.Mode(), err)
	}
	raw, lines := readTranscript(t, tr.Path())
	var kinds []string
	for i, l := range lines {
		kinds = append(kinds, l.Type+"/"+l.Message.Role)
		switch {
		case i == 0 && l.ParentUUID != nil:
			t.Errorf("the first line has a parent: %s", raw[i])
		case i > 0 && (l.ParentUUID == nil || *l.ParentUUID != lines[i-1].UUID):
			t.Errorf("line %d is not linked to the one before: %s", i, raw[i])
		}
		if l.SessionID != log.ID() || l.Cwd != "/work" || len(l.UUID) != 36 {
			t.Errorf("line %d: %s", i, raw[i])
		}
	}
	if got := strings.Join(kinds, " "); got != "user/user assistant/assistant assistant/assistant assistant/assistant user/user assistant/assistant" {
		t.Errorf("lines: %s", got)
	}
	if string(lines[0].Message.Content) != `"list the files"` ||
		!strings.Contains(raw[1], `"model":"claude-test"`) ||
		!strings.Contains(raw[1], `"content":[{"type":"thinking","thinking":"ls will do","signature":"sig"}]`) ||
		!strings.Contains(raw[3], `"content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]`) ||
		!strings.Contains(raw[4], `"content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"a.go\n","is_error":false}]`) ||
		lines[4].ToolUseResult["stdout"] != "a.go\n" {
		t.Errorf("transcript:\n%s", strings.Join(raw, "\n"))
	}
	if got := lastAssistantText(raw); got != "One file: a.go. Not done yet." {
		t.Errorf("the last assistant text is %q", got)
	}

	before, _ := os.ReadFile(tr.Path())
	put(session.Record{Type: session.TypeUser, Text: "go on"}, session.Record{Type: session.TypeAssistant, Text: "DONE"})
	if err := tr.Sync(); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(tr.Path())
	if !bytes.HasPrefix(after, before) {
		t.Errorf("Sync rewrote what it had written")
	}
	raw, lines = readTranscript(t, tr.Path())
	if len(lines) != 8 || lastAssistantText(raw) != "DONE" || *lines[6].ParentUUID != lines[5].UUID {
		t.Errorf("after more records:\n%s", strings.Join(raw, "\n"))
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	// A later process makes it afresh, with the same ids.
	again := NewTranscript(log.Path(), "claude-test", bashShape{})
	if err := again.Sync(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(again.Path()); !bytes.Equal(b, after) {
		t.Errorf("made again, the transcript differs:\n%s\n%s", b, after)
	}
}
