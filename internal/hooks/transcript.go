package hooks

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// Transcript is a session's conversation in Claude Code's transcript format
// (one JSON object a line: user and assistant messages with their content
// blocks, tool uses and results, linked by uuid and parentUuid), which hooks
// read at transcript_path. It is derived from the session's log: Sync
// appends what the log gained since, so it is current when a hook runs and
// never rewritten but once, when a process first syncs it (a resumed session
// starts it afresh). It lives beside the log, in the session directory's
// transcripts folder, readable by the user alone.
type Transcript struct {
	mu   sync.Mutex
	path string
	tail *session.Tail
	// Shape gives a call as Claude Code's tool (name and input) and its
	// result as that tool's toolUseResult; nil: dsh's own.
	shape Shaper
	f     *os.File
	// What the entries repeat, from the log's header.
	sessionID, cwd string
	sidechain      bool
	model          string
	seq            int
	parent         string // the last entry's uuid
	calls          map[string]pendingCall
}

// Shaper maps a dsh call and its result to Claude Code's tool's shapes.
type Shaper interface {
	HookCall(name string, args jsontext.Value) (string, jsontext.Value)
	HookResponse(name string, args jsontext.Value, r tool.Result) jsontext.Value
}

type pendingCall struct {
	name string
	args jsontext.Value
}

// TranscriptPath is where the transcript of the log at logPath is written.
func TranscriptPath(logPath string) string {
	return filepath.Join(filepath.Dir(logPath), "transcripts", filepath.Base(logPath))
}

// NewTranscript returns the transcript of the log at logPath, whose
// assistant messages are model's until the log says otherwise; nothing is
// written before the first Sync.
func NewTranscript(logPath, model string, shape Shaper) *Transcript {
	return &Transcript{path: TranscriptPath(logPath), tail: session.NewTail(logPath), model: model, shape: shape, calls: map[string]pendingCall{}}
}

// Path is the transcript's file.
func (t *Transcript) Path() string { return t.path }

// Sync appends to the transcript what the log gained since the last Sync.
func (t *Transcript) Sync() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.f == nil {
		if err := os.MkdirAll(filepath.Dir(t.path), 0o700); err != nil {
			return fmt.Errorf("transcript: %w", err)
		}
		f, err := os.OpenFile(t.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return fmt.Errorf("transcript: %w", err)
		}
		t.f = f
	}
	var buf []byte
	err := t.tail.Next(func(r session.Record) error {
		for _, e := range t.entries(r) {
			line, err := json.Marshal(e, json.Deterministic(true))
			if err != nil {
				return err
			}
			buf = append(append(buf, line...), '\n')
		}
		return nil
	})
	if len(buf) > 0 {
		if _, werr := t.f.Write(buf); werr != nil {
			err = errors.Join(err, werr)
		}
	}
	if err != nil {
		return fmt.Errorf("transcript: %w", err)
	}
	return nil
}

// Close closes the transcript's file.
func (t *Transcript) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.f == nil {
		return nil
	}
	err := t.f.Close()
	t.f = nil
	return err
}

// entry is one transcript line, as Claude Code writes it.
type entry struct {
	ParentUUID       *string        `json:"parentUuid"`
	IsSidechain      bool           `json:"isSidechain"`
	UserType         string         `json:"userType"`
	Cwd              string         `json:"cwd"`
	SessionID        string         `json:"sessionId"`
	Version          string         `json:"version"`
	Type             string         `json:"type"`
	Message          any            `json:"message"`
	UUID             string         `json:"uuid"`
	Timestamp        string         `json:"timestamp"`
	ToolUseResult    jsontext.Value `json:"toolUseResult,omitzero"`
	IsCompactSummary bool           `json:"isCompactSummary,omitzero"`
}

type userMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"` // a prompt's text, or tool_result blocks
}

type assistantMessage struct {
	ID           string  `json:"id"`
	Type         string  `json:"type"`
	Role         string  `json:"role"`
	Model        string  `json:"model"`
	Content      []block `json:"content"`
	StopReason   *string `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
}

// block is a content block; only the members of its type are set.
type block struct {
	Type      string         `json:"type"`
	Text      *string        `json:"text,omitempty"`
	Thinking  *string        `json:"thinking,omitempty"`
	Signature string         `json:"signature,omitempty"`
	ID        string         `json:"id,omitempty"`
	Name      string         `json:"name,omitempty"`
	Input     jsontext.Value `json:"input,omitzero"`
	ToolUseID string         `json:"tool_use_id,omitempty"`
	Content   *string        `json:"content,omitempty"`
	IsError   *bool          `json:"is_error,omitempty"`
}

// entries are the transcript lines of one log record.
func (t *Transcript) entries(r session.Record) []entry {
	switch r.Type {
	case session.TypeHeader:
		t.sessionID, t.cwd, t.sidechain = r.SessionID, r.Cwd, r.Parent != nil
		return nil
	case session.TypeModel:
		t.model = r.Model
		return nil
	case session.TypeUser:
		return []entry{t.entry("user", userMessage{Role: "user", Content: r.Text}, r.Time)}
	case session.TypeCompaction:
		e := t.entry("user", userMessage{Role: "user", Content: "This session is being continued from a previous conversation. The summary:\n\n" + r.Text}, r.Time)
		e.IsCompactSummary = true
		return []entry{e}
	case session.TypeAssistant:
		text := r.Text
		return []entry{t.assistant(block{Type: "text", Text: &text}, r.Time)}
	case session.TypeThinking:
		text := r.Text
		return []entry{t.assistant(block{Type: "thinking", Thinking: &text, Signature: r.Signature}, r.Time)}
	case session.TypeToolCall:
		name, input := r.Name, r.Args
		if t.shape != nil {
			name, input = t.shape.HookCall(r.Name, r.Args)
		}
		if len(input) == 0 {
			input = jsontext.Value("{}")
		}
		t.calls[r.CallID] = pendingCall{name: r.Name, args: r.Args}
		return []entry{t.assistant(block{Type: "tool_use", ID: r.CallID, Name: name, Input: input}, r.Time)}
	case session.TypeToolResult:
		if r.Result == nil {
			return nil
		}
		text, isErr := r.Result.TextOf(), r.Result.IsError
		e := t.entry("user", userMessage{Role: "user", Content: []block{{Type: "tool_result", ToolUseID: r.CallID, Content: &text, IsError: &isErr}}}, r.Time)
		if c, ok := t.calls[r.CallID]; ok && t.shape != nil {
			e.ToolUseResult = t.shape.HookResponse(c.name, c.args, *r.Result)
		}
		delete(t.calls, r.CallID)
		return []entry{e}
	case session.TypeProgress, session.TypePlan, session.TypeTurnEnd, session.TypeMode, session.TypeAllow,
		session.TypeInstructions, session.TypeCheckpoint, session.TypeRestore, session.TypeHook, session.TypeCommand,
		session.TypeReply, session.TypeDamaged, session.TypeDecision, session.TypeTitle:
	}
	return nil
}

func (t *Transcript) assistant(b block, at time.Time) entry {
	return t.entry("assistant", assistantMessage{ID: "msg_" + t.uuid(t.seq)[:8], Type: "message", Role: "assistant",
		Model: t.model, Content: []block{b}}, at)
}

// entry is the next line, linked to the one before.
func (t *Transcript) entry(typ string, msg any, at time.Time) entry {
	t.seq++
	e := entry{IsSidechain: t.sidechain, UserType: "external", Cwd: t.cwd, SessionID: t.sessionID, Version: "dsh",
		Type: typ, Message: msg, UUID: t.uuid(t.seq), Timestamp: at.UTC().Format("2006-01-02T15:04:05.000Z")}
	if t.parent != "" {
		p := t.parent
		e.ParentUUID = &p
	}
	t.parent = e.UUID
	return e
}

// uuid is the n-th entry's id: derived from the session and n, so a
// transcript made again from the same log has the same ids.
func (t *Transcript) uuid(n int) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", t.sessionID, n)))
	x := fmt.Sprintf("%x", h[:16])
	return strings.Join([]string{x[:8], x[8:12], "4" + x[13:16], "8" + x[17:20], x[20:32]}, "-")
}
