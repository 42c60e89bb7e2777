// Package tool is the contract every dsh tool implements: typed parameters whose
// model-facing JSON schema is generated from the Go type, an effectful Execute, and
// two pure presenters that turn logged data into cards.
package tool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// Result is what Execute returns and the session log persists: the model-facing
// content, whether the call failed, and the meta the presenters need (the lines
// read, the applied hunks, the exit status). Meta is opaque JSON to everything but
// the tool's own PresentResult, which must narrow it defensively.
type Result struct {
	Content []card.Content `json:"content"`
	IsError bool           `json:"isError"`
	Meta    jsontext.Value `json:"meta,omitzero"`
}

// Text returns a successful result holding one text block.
func Text(s string) Result { return Result{Content: []card.Content{card.Text(s)}} }

// Errorf returns an error result for the model.
func Errorf(format string, args ...any) Result {
	return Result{Content: []card.Content{card.Text(fmt.Sprintf(format, args...))}, IsError: true}
}

// TextOf joins the text blocks of a result.
func (r Result) TextOf() string {
	if len(r.Content) == 1 && r.Content[0].Type == "text" {
		return r.Content[0].Text // no copy of what may be a command's whole output
	}
	var b strings.Builder
	for _, c := range r.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// Permission says what a tool needs from the user before it runs.
type Permission int

// The permission classes. The agent's mode decides which of them it asks about.
const (
	PermNone    Permission = iota // reads and session bookkeeping: never asks
	PermEdit                      // changes files
	PermExecute                   // runs or kills processes
)

// PlanEntry is one item of the session's todo list, shown by consumers as a plan.
type PlanEntry struct {
	Content  string `json:"content"`
	Status   string `json:"status"`             // pending, in_progress, completed
	Priority string `json:"priority,omitempty"` // high, medium, low
}

// Session is the state a session's tools share: its workspace (root and cwd) and
// per-tool state such as the files read so far or the running background jobs.
type Session struct {
	ID        string
	Workspace *workspace.Workspace
	// Files is the editor's view of the workspace's files, when the session's
	// client offers one: the file tools read its buffers (unsaved changes
	// included) and apply changes through it, so the editor can review them.
	// Nil: the disk.
	Files Files
	// Subagents starts the child sessions of the task tool; the host sets it.
	// Nil: no subagent can be started here.
	Subagents Subagents
	// Parent is the session whose task started this one: its processes run
	// beside this one's.
	Parent *Session

	mu     sync.Mutex
	state  map[any]any
	order  []any
	closed bool
}

// Files reads and writes text files through an editor, which opens them by
// their path: files of the workspace, located.
type Files interface {
	// CanRead and CanWrite say which of the two the editor offers.
	CanRead() bool
	CanWrite() bool
	// ReadText and WriteText fail with ErrUseDisk when the editor must not
	// be given the path: the caller reads or writes the disk instead.
	ReadText(ctx context.Context, f workspace.File) (string, error)
	WriteText(ctx context.Context, f workspace.File, content string) error
}

// ErrUseDisk is wrapped by a Files refusal to hand the editor a path that
// could change meaning before the editor opens it (a link on the way,
// something swapping it, a process of the session running).
var ErrUseDisk = errors.New("the editor is not given this path")

// ErrUnverified is wrapped by a Files write whose result the disk does not
// confirm: the file may or may not hold the change.
var ErrUnverified = errors.New("the editor's write could not be verified")

// Subagents runs a task in a child session: a subagent with its own context
// and log, whose tools and mode are no wider than the session's.
type Subagents interface {
	Run(ctx context.Context, t Task) (TaskOutcome, error)
}

// Task is what a task call asks of a subagent. CallID is the parent call's,
// which the child's log links to; Agent names a custom agent ("" the default).
type Task struct {
	CallID      string
	Agent       string
	Description string
	Prompt      string
}

// TaskOutcome is how a subagent's task ended: its session, its final text,
// its calls and tokens, the stop reason of its turn.
type TaskOutcome struct {
	Agent   string
	Session string
	Text    string
	Calls   int
	Stop    string
	// Calls of the model, each with its model, so the parent prices them.
	Usage []TaskUsage
}

// TaskUsage is one model call of a subagent.
type TaskUsage struct {
	Model        string `json:"model,omitempty"`
	InputTokens  int64  `json:"inputTokens"`
	OutputTokens int64  `json:"outputTokens"`
}

// NewSession returns the tool state of a new session.
func NewSession(id string, ws *workspace.Workspace) *Session {
	return &Session{ID: id, Workspace: ws, state: map[any]any{}}
}

// State returns the session's value for key, creating it with init on first use.
// Keys should be unexported types of the tool package that owns the state. After
// Close, a value created late (by a call still running) is closed at once if it is
// an io.Closer, so nothing started after the session ended outlives it.
func (s *Session) State(key any, init func() any) any {
	s.mu.Lock()
	if v, ok := s.state[key]; ok {
		s.mu.Unlock()
		return v
	}
	v := init()
	s.state[key] = v
	if s.closed {
		s.mu.Unlock()
		if c, ok := v.(io.Closer); ok {
			_ = c.Close() // a closed value refuses work; there is no one to tell
		}
		return v
	}
	s.order = append(s.order, key)
	s.mu.Unlock()
	return v
}

// Runner is state that starts processes (the job table): Running says
// whether one still runs.
type Runner interface{ Running() bool }

// Running says whether a process this session or its parent started still
// runs: something that could change the workspace's files at any moment.
func (s *Session) Running() bool {
	for ; s != nil; s = s.Parent {
		s.mu.Lock()
		vals := make([]any, 0, len(s.state))
		for _, v := range s.state {
			vals = append(vals, v)
		}
		s.mu.Unlock()
		for _, v := range vals {
			if r, ok := v.(Runner); ok && r.Running() {
				return true
			}
		}
	}
	return false
}

// Killer is state that can also end at once, without the grace Close gives (the
// exit path): a process table sends SIGKILL.
type Killer interface{ Kill() error }

// Close ends the session's tool state: every value implementing io.Closer (the job
// table, for one) is closed, in reverse order of creation. It is idempotent.
func (s *Session) Close() error { return s.end(false) }

// Kill is Close for the exit path: values that are Killers are killed instead.
func (s *Session) Kill() error { return s.end(true) }

func (s *Session) end(now bool) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	// The values are taken under the lock: a call still running may add state
	// (which State then closes itself) while these are closed.
	vals := make([]any, len(s.order))
	for i, k := range s.order {
		vals[i] = s.state[k]
	}
	s.mu.Unlock()
	var first error
	for i := len(vals) - 1; i >= 0; i-- {
		var err error
		switch v := vals[i].(type) {
		case Killer:
			if now {
				err = v.Kill()
			} else if c, ok := v.(io.Closer); ok {
				err = c.Close()
			}
		case io.Closer:
			err = v.Close()
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Env is what one call's Execute gets: the session plus the call's live channels.
type Env struct {
	Session *Session
	// CallID is the call's id in the session's log.
	CallID string
	// Progress receives live output while the call runs (a running command's
	// output). It may be nil.
	Progress func(chunk string)
	// Plan publishes the session's todo list to consumers. It may be nil.
	Plan func([]PlanEntry)
	// Ask puts a question to the user and waits for the answer (the plan
	// tool's "Implement this plan?", ask_user). nil when no one can be asked.
	Ask func(ctx context.Context, q Question) (card.Answer, error)
	// SetMode switches the session's permission mode, logged, from the next
	// call on. It may be nil.
	SetMode func(mode string) error
	// AutoMode says that the session may switch to the auto mode: its commands
	// run in the sandbox.
	AutoMode bool
	// ReadOnlyMode says that the session's mode changes nothing (read-only,
	// plan): a call asks nothing whose yes would start a program.
	ReadOnlyMode bool
	// Mode is the session's permission mode when the call was permitted.
	Mode string
}

// Question is what a tool asks the user: a text and the choices it offers;
// FreeText lets the user answer in their own words where the UI can take them.
type Question struct {
	Text     string
	Choices  []card.Choice
	FreeText bool
}

// Emit sends a progress chunk if anyone listens.
func (e Env) Emit(chunk string) {
	if e.Progress != nil && chunk != "" {
		e.Progress(chunk)
	}
}

// PublishPlan sends the todo list if anyone listens.
func (e Env) PublishPlan(p []PlanEntry) {
	if e.Plan != nil {
		e.Plan(p)
	}
}

// Approval is what the permission step knows about a call: whether it is known to
// be harmless, and what an "always allow" of it would remember.
type Approval struct {
	// Keys are the remembered approvals the call needs, all of them, to run without
	// asking again (one per command a shell line runs, say).
	Keys []string
	// Label names what "always" remembers, for the prompt: "git status", "file edits
	// in this session".
	Label string
	// Remember is false when no approval of this call may be remembered (a command
	// the approval rule cannot vouch for): the user is asked every time.
	Remember bool
	// Safe calls are known to be harmless and run without asking in the modes that
	// ask (known read-only commands).
	Safe bool
	// Confined calls act only inside what dsh confines (a command in the
	// sandbox, a job of the session's), so the auto mode runs them unasked.
	// Anything else that executes (a fetch, an MCP tool) is asked about in auto.
	Confined bool
	// Opaque calls are another program's tools (an MCP server's): dsh cannot
	// tell what they do, so the read-only mode asks about them rather than
	// refusing them, and no mode takes them for confined.
	Opaque bool
	// ReadsOnly calls change nothing on this machine, though they execute
	// (a fetch): the plan mode asks about them rather than refusing them.
	ReadsOnly bool
	// Paths are the files the call changes, as the call names them. The
	// permission step asks about a path inside a .git directory, and one
	// that steers later sessions (.claude, .dsh, AGENTS.md…), in every mode
	// that may ask, and, in the auto mode, about one outside the workspace.
	Paths []string
}

// NoMeta is the meta type of tools whose results carry none.
type NoMeta struct{}

// Validator is implemented by meta types whose decoded value must be checked
// before a presenter may trust it (line numbers in order, counts that fit, …).
type Validator interface{ Validate() error }

// Spec declares a tool with typed parameters P and typed result meta M. Execute
// is where effects live; PresentCall and PresentResult must be pure functions of
// their arguments (no file system, clock or environment) because they run both
// live and on replay.
type Spec[P, M any] struct {
	Name        string
	Description string // model-facing; embed it from a .md file
	// Guidance is the tool's paragraph in the system prompt: when and how to use it.
	Guidance string
	// ReadOnly tools change nothing and may run concurrently with each other.
	ReadOnly bool
	// ReadOnlyCall, if set, says it of one call instead (a task whose
	// subagent only reads).
	ReadOnlyCall func(p P) bool
	Permission   Permission
	// Kind is the kind of work its calls do; the framework puts it on the
	// tool's generic call cards, so presenters leave it out.
	Kind card.ToolKind

	// Approval says what "always allow" remembers for a call; nil remembers the tool.
	Approval func(p P) Approval
	// Preview, if set, runs before the permission step and returns what the call
	// would do (write and edit: the current file and the hunks they would apply).
	// It is logged with the call; PresentCall and Execute get it back. An error is
	// the model's error result: the call cannot succeed, so nobody is asked.
	Preview func(ctx context.Context, env Env, p P) (*M, error)
	// Execute runs the call. The Result is what the model reads (IsError for a
	// failure it can act on) and meta is what the presenters get back; an error is
	// a harness failure, which ends the turn and is shown to the user.
	Execute       func(ctx context.Context, env Env, p P, preview *M) (Result, *M, error)
	PresentCall   func(p P, preview *M) card.Call
	PresentResult func(p P, r Result, m *M) card.Result // nil: show the raw result; m is nil unless valid
	// Fold, if set, derives the session's tool state from a logged call and its
	// result. It runs for every result as it is logged and again for each one when
	// a session is reloaded, so a reloaded session knows what the live one knew.
	Fold func(s *Session, p P, r Result, m *M)
	// Touched, if set, names the files (absolute paths) a logged call read or
	// changed, from its result: the agent adds the instructions (AGENTS.md) of
	// the directories they are in to the context.
	Touched func(p P, r Result, m *M) []string
	// Hook, if set, is a call as Claude Code's hooks see it: the name Claude
	// Code gives the tool (Bash, Read, …) and its tool_input, paths made
	// absolute against cwd (the session's directory), so that hook scripts
	// written for Claude Code read it unchanged. Nil: hooks see the tool's own
	// name and arguments.
	Hook func(p P, cwd string) (name string, input any)
	// Unhook, set with Hook, is the call a hook's updatedInput (Hook's input
	// shape, the call's input with the hook's members laid over it) asks for
	// instead of p.
	Unhook func(p P, input jsontext.Value, cwd string) (P, error)
	// HookResponse, set with Hook, is a result as Claude Code's tool gives it
	// to PostToolUse hooks (tool_response): Bash's stdout, Write's filePath…
	HookResponse func(p P, r Result, m *M, cwd string) any
}

// HookCaller is implemented by the tools of Specs: a call as Claude Code's
// hooks see it (Spec.Hook). Tools without it (an MCP server's, whose names
// are already Claude Code's) are seen by their own name and arguments.
type HookCaller interface {
	HookCall(args []byte, cwd string) (name string, input jsontext.Value, ok bool)
	// HookArgs are the arguments of the call a hook's updated input (the
	// call's HookCall input with the hook's members laid over it) asks for;
	// ok is false for a tool without the mapping.
	HookArgs(args []byte, input jsontext.Value, cwd string) (updated []byte, ok bool, err error)
	// HookResponse is r as the tool's tool_response; ok is false for a tool
	// without the mapping.
	HookResponse(args []byte, r Result, cwd string) (response jsontext.Value, ok bool)
}

// Tool is a Spec with its types erased: arguments, previews and meta travel as
// raw JSON.
type Tool interface {
	Name() string
	Description() string
	Guidance() string
	// Schema is the JSON schema of the parameters.
	Schema() jsontext.Value
	ReadOnly() bool
	Permission() Permission
	Kind() card.ToolKind
	// Approval of a call; arguments that do not decode are never remembered.
	Approval(args []byte) Approval
	// Preview returns the call's logged preview (nil when the tool has none) or,
	// when the call cannot succeed, the error result to give the model instead.
	Preview(ctx context.Context, env Env, args []byte) (jsontext.Value, *Result)
	// Run decodes args and executes; bad arguments become an error result. An
	// error is a harness failure.
	Run(ctx context.Context, env Env, args []byte, preview jsontext.Value) (Result, error)
	// PresentCall decodes args and presents the call; bad arguments give a generic
	// card that shows them raw.
	PresentCall(args []byte, preview jsontext.Value) card.Call
	// PresentResult decodes args and presents the result; bad arguments give nil.
	PresentResult(args []byte, r Result) card.Result
	// Fold updates the session's tool state from a logged result.
	Fold(s *Session, args []byte, r Result)
	// Touched names the files (absolute paths) a logged call read or changed.
	Touched(args []byte, r Result) []string
}
