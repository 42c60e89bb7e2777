package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/tool/bash"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// turnFunc answers one model request.
type turnFunc func(ctx context.Context, req provider.Request) (*provider.Response, error)

// fakeProvider answers requests with its turns in order and keeps every request.
// It exists for what a script cannot express: errors and hooks into the loop.
type fakeProvider struct {
	mu    sync.Mutex
	turns []turnFunc
	reqs  []provider.Request
}

func (f *fakeProvider) Name() string { return "fake" }

func (f *fakeProvider) Stream(ctx context.Context, req provider.Request, onDelta func(provider.Delta)) (*provider.Response, error) {
	f.mu.Lock()
	req.Messages = cloneMessages(req.Messages)
	f.reqs = append(f.reqs, req)
	if len(f.turns) == 0 {
		f.mu.Unlock()
		return nil, errors.New("fake provider: no more turns")
	}
	t := f.turns[0]
	f.turns = f.turns[1:]
	f.mu.Unlock()
	resp, err := t(ctx, req)
	if err == nil && onDelta != nil {
		for _, p := range resp.Message.Parts {
			if p.Type == provider.PartText {
				onDelta(provider.Delta{Type: provider.DeltaText, Text: p.Text})
			}
		}
	}
	return resp, err
}

func (f *fakeProvider) requests() []provider.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

// recorder keeps the requests a provider (a script) is sent.
type recorder struct {
	provider.Provider
	mu   sync.Mutex
	reqs []provider.Request
}

func (r *recorder) Stream(ctx context.Context, req provider.Request, onDelta func(provider.Delta)) (*provider.Response, error) {
	r.mu.Lock()
	req.Messages = cloneMessages(req.Messages)
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.Provider.Stream(ctx, req, onDelta)
}

func (r *recorder) requests() []provider.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.reqs)
}

// scripted parses a script for the script provider and records its requests.
func scripted(t *testing.T, js string) *recorder {
	t.Helper()
	s, err := script.Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return &recorder{Provider: s}
}

func cloneMessages(ms []provider.Message) []provider.Message {
	out := make([]provider.Message, len(ms))
	for i, m := range ms {
		out[i] = provider.Message{Role: m.Role, Parts: slices.Clone(m.Parts)}
	}
	return out
}

// reply is a turn that answers with parts; it asks for tools when it holds calls.
func reply(parts ...provider.Part) turnFunc {
	return func(context.Context, provider.Request) (*provider.Response, error) {
		stop := provider.StopEndTurn
		for _, p := range parts {
			if p.Type == provider.PartToolUse {
				stop = provider.StopToolUse
			}
		}
		return &provider.Response{
			Message:      provider.Message{Role: provider.RoleAssistant, Parts: parts},
			StopReason:   stop,
			InputTokens:  100,
			OutputTokens: 10,
		}, nil
	}
}

func text(s string) provider.Part { return provider.Part{Type: provider.PartText, Text: s} }

func use(id, name, args string) provider.Part {
	return provider.Part{Type: provider.PartToolUse, ID: id, Name: name, Args: jsontext.Value(args)}
}

// testEnv is a workspace, its tool session and a session log in temp dirs.
type testEnv struct {
	dir   string
	tools *tool.Session
	log   *testLog
}

func newEnv(t *testing.T) *testEnv {
	t.Helper()
	dir := t.TempDir()
	ws, err := workspace.New(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	ts := tool.NewSession("test", ws)
	log, err := session.Create(t.TempDir(), "test-session", ws.Root(), session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ts.Close()
		log.Close()
	})
	return &testEnv{dir: ws.Root(), tools: ts, log: &testLog{Log: log}}
}

// testLog is the session log with a hook that sees every record put, as the
// session host's subscribers would.
type testLog struct {
	*session.Log
	mu    sync.Mutex
	onPut func(session.Record)
}

func (l *testLog) Put(r session.Record) (session.Record, error) {
	rec, err := l.Log.Put(r)
	l.mu.Lock()
	hook := l.onPut
	l.mu.Unlock()
	if err == nil && hook != nil {
		hook(rec)
	}
	return rec, err
}

func (l *testLog) watch(fn func(session.Record)) {
	l.mu.Lock()
	l.onPut = fn
	l.mu.Unlock()
}

// records reads back what the log holds.
func (e *testEnv) records(t *testing.T) []session.Record {
	t.Helper()
	recs, err := session.ReadFile(e.log.Path())
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func (e *testEnv) agent(p provider.Provider, reg *tool.Registry, mode Mode, permit Permitter) *Agent {
	return New(Config{Provider: p, Registry: reg, Log: e.log, Tools: e.tools, Mode: mode, Permit: permit, Model: "test-model"})
}

// summary renders records compactly, one string each, for whole-sequence checks.
// Progress records are left out: how a command's output is chunked is the tool's.
func summary(recs []session.Record) []string {
	var out []string
	for _, r := range recs {
		switch r.Type {
		case session.TypeHeader, session.TypeProgress, session.TypeCheckpoint, session.TypeRestore, session.TypeCommand, session.TypeReply:
			continue
		case session.TypeUser, session.TypeAssistant:
			out = append(out, fmt.Sprintf("%s %s", r.Type, r.Text))
		case session.TypeThinking:
			out = append(out, fmt.Sprintf("thinking %s [%s]", r.Text, r.Signature))
		case session.TypeToolCall:
			out = append(out, fmt.Sprintf("call %s %s %s", r.CallID, r.Name, r.Args))
		case session.TypeToolResult:
			status := "ok"
			if r.Result.IsError {
				status = "error"
			}
			out = append(out, fmt.Sprintf("result %s %s: %s", r.CallID, status, firstLine(r.Result.TextOf())))
		case session.TypePlan:
			out = append(out, fmt.Sprintf("plan %d", len(r.Plan)))
		case session.TypeTurnEnd:
			s := fmt.Sprintf("end %s", r.StopReason)
			if r.Error != "" {
				s += " (" + r.Error + ")"
			}
			out = append(out, s)
		case session.TypeMode:
			out = append(out, "mode "+r.Mode)
		case session.TypeAllow:
			out = append(out, "allow "+strings.Join(r.Keys, ","))
		case session.TypeCompaction:
			out = append(out, fmt.Sprintf("compaction keep %d: %s", r.Keep, firstLine(r.Text)))
		case session.TypeInstructions:
			out = append(out, "instructions "+r.Path)
		case session.TypeModel:
			out = append(out, "model "+r.Model+" "+r.Thinking)
		case session.TypeHook:
			out = append(out, fmt.Sprintf("hook %s %s %s", r.Hook.Event, r.Hook.Tool, r.Hook.Decision))
		case session.TypeDamaged, session.TypeDecision, session.TypeTitle:
		}
	}
	return out
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func resultOf(t *testing.T, recs []session.Record, callID string) tool.Result {
	t.Helper()
	for _, r := range recs {
		if r.Type == session.TypeToolResult && r.CallID == callID {
			return *r.Result
		}
	}
	t.Fatalf("no result for %s", callID)
	return tool.Result{}
}

// probe is a set of test tools whose behaviour a test supplies: look (read-only),
// change (edits) and shell (executes, shown as a terminal card).
type probe struct {
	run func(ctx context.Context, name, id string) tool.Result
}

type probeArgs struct {
	ID string `json:"id"`
}

type shellArgs struct {
	Command string `json:"command"`
}

func (p *probe) exec(ctx context.Context, name, id string) tool.Result {
	if p.run == nil {
		return tool.Text(name + " " + id + " done")
	}
	return p.run(ctx, name, id)
}

func (p *probe) tools() []tool.Tool {
	generic := func(a probeArgs, _ *tool.NoMeta) card.Call { return &card.GenericCall{Title: a.ID} }
	return []tool.Tool{
		tool.New(tool.Spec[probeArgs, tool.NoMeta]{
			Name: "look", Description: "Looks.", ReadOnly: true, Permission: tool.PermNone, Kind: "read",
			Execute: func(ctx context.Context, _ tool.Env, a probeArgs, _ *tool.NoMeta) (tool.Result, *tool.NoMeta, error) {
				return p.exec(ctx, "look", a.ID), nil, nil
			},
			PresentCall: generic,
		}),
		tool.New(tool.Spec[probeArgs, tool.NoMeta]{
			Name: "change", Description: "Changes.", Permission: tool.PermEdit, Kind: "edit",
			Execute: func(ctx context.Context, _ tool.Env, a probeArgs, _ *tool.NoMeta) (tool.Result, *tool.NoMeta, error) {
				return p.exec(ctx, "change", a.ID), nil, nil
			},
			PresentCall: generic,
		}),
		tool.New(tool.Spec[probeArgs, tool.NoMeta]{
			Name: "tweak", Description: "Also changes.", Permission: tool.PermEdit, Kind: "edit",
			Execute: func(ctx context.Context, _ tool.Env, a probeArgs, _ *tool.NoMeta) (tool.Result, *tool.NoMeta, error) {
				return p.exec(ctx, "tweak", a.ID), nil, nil
			},
			PresentCall: generic,
		}),
		tool.New(tool.Spec[shellArgs, tool.NoMeta]{
			Name: "shell", Description: "Runs.", Permission: tool.PermExecute, Kind: "execute",
			Execute: func(ctx context.Context, _ tool.Env, a shellArgs, _ *tool.NoMeta) (tool.Result, *tool.NoMeta, error) {
				return p.exec(ctx, "shell", a.Command), nil, nil
			},
			PresentCall: func(a shellArgs, _ *tool.NoMeta) card.Call { return &card.TerminalCall{Title: a.Command} },
			Approval: func(a shellArgs) tool.Approval {
				ap := bash.CommandApproval(a.Command, nil)
				ap.Confined = true // as bash in the sandbox
				return ap
			},
		}),
	}
}

// asker is a Permitter that answers from a queue and records what it was asked.
type asker struct {
	mu      sync.Mutex
	answers []Decision
	asked   []string // tool name, or the command of a terminal card
}

func (a *asker) permit(_ context.Context, req PermissionRequest) (Decision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	what := req.Tool
	if tc, ok := req.Card.(*card.TerminalCall); ok {
		what = tc.Title
	}
	a.asked = append(a.asked, what)
	if len(a.answers) == 0 {
		return AllowOnce, nil
	}
	d := a.answers[0]
	a.answers = a.answers[1:]
	return d, nil
}
