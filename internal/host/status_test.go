package host

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/provider/models"
	"github.com/dsh-dev/dsh/internal/tool"
)

// statusLog collects a subscriber's status events.
type statusLog struct {
	mu  sync.Mutex
	sts []Status
}

func (l *statusLog) last(t *testing.T) Status {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.sts) == 0 {
		t.Fatal("no status event")
	}
	return l.sts[len(l.sts)-1]
}

// The host folds the session's facts into one status: after a turn its tokens
// and cost; after /model the window (the configuration's for that model) and
// the price of the calls from then on, each call priced at the model that made
// it; and a reloaded session has the status the live one had.
func TestStatusFollowsTurnsModelAndLoad(t *testing.T) {
	p := scripted(t, `{"turns": [
		{"text": "one", "input_tokens": 1000, "output_tokens": 100},
		{"text": "two", "input_tokens": 1000, "output_tokens": 100}
	]}`)
	root, dir := t.TempDir(), t.TempDir()
	o := options(t, root, dir, p)
	o.Model = "claude-sonnet-4-5"
	o.ContextWindows = func(model string) (int64, bool) { return 50_000, model == "claude-haiku-4-5" }
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	var events statusLog
	sub := s.Subscribe(func(e Event) {
		if e.Kind == KindStatus {
			events.mu.Lock()
			events.sts = append(events.sts, e.Status)
			events.mu.Unlock()
		}
	})
	defer sub.Close()
	if st := s.Status(); st.Model != "claude-sonnet-4-5" || st.Window != 200_000 || st.Mode != agent.ModeBypass || st.Cwd != s.Root() {
		t.Errorf("the first status = %+v", st)
	}
	if _, err := s.Prompt(context.Background(), "first"); err != nil {
		t.Fatal(err)
	}
	sub.Flush(time.Second)
	st := s.Status()
	sonnet := 1000*3/1e6 + 100*15/1e6
	if st.InputTokens != 1000 || st.OutputTokens != 100 || !near(st.Cost, sonnet) || st.Unpriced || st.ContextTokens == 0 {
		t.Errorf("after a turn the status = %+v, want 1000 in, 100 out, $%.4f", st, sonnet)
	}
	if got := events.last(t); got != st {
		t.Errorf("the last status event = %+v, want the status %+v", got, st)
	}

	if r, err := s.Submit(context.Background(), Input{Text: "/model claude-haiku-4-5 high", Where: Both}); err != nil || r.Text != "" {
		t.Fatalf("/model = %q, %v; want no reply but the model record", r.Text, err)
	}
	sub.Flush(time.Second)
	st = s.Status()
	if st.Model != "claude-haiku-4-5" || st.Thinking != "high" || st.Window != 50_000 {
		t.Errorf("after /model the status = %+v, want haiku, high, the configured 50000 window", st)
	}
	if got := events.last(t); got != st {
		t.Errorf("after /model the last status event = %+v, want %+v", got, st)
	}
	if _, err := s.Prompt(context.Background(), "second"); err != nil {
		t.Fatal(err)
	}
	sub.Flush(time.Second)
	live := s.Status()
	haiku := 1000*1/1e6 + 100*5/1e6
	if live.InputTokens != 2000 || live.OutputTokens != 200 || !near(live.Cost, sonnet+haiku) {
		t.Errorf("after two turns the status = %+v, want $%.4f (each call at its model)", live, sonnet+haiku)
	}
	if got := events.last(t); got != live {
		t.Errorf("the last status event = %+v, want %+v", got, live)
	}
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	re, err := Load(o, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	if got := re.Status(); got != live {
		t.Errorf("the loaded session's status = %+v, want the live one's %+v", got, live)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// Built-in commands validate once, here: the model against the model list, the
// thinking level against the levels, the mode against the modes (auto only
// with the sandbox). A bad argument is a reply and changes nothing.
func TestCommandValidation(t *testing.T) {
	o := options(t, t.TempDir(), t.TempDir(), scripted(t, `{"turns": [{"text": "unused"}]}`))
	o.Model = "claude-sonnet-4-5"
	o.Models = func(context.Context) ([]models.Info, error) {
		return []models.Info{models.Lookup("claude-sonnet-4-5"), models.Lookup("claude-haiku-4-5")}, nil
	}
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct{ name, args, want string }{
		{"model", "gpt-4o", `Cannot set the model: unknown model "gpt-4o" (/model lists them).`},
		{"model", "claude-haiku-4-5 lots", `Cannot set the model: thinking: want off, adaptive, low, medium, high, xhigh, max or a budget of at least 1024 tokens, got "lots".`},
		{"model", "a b c", "Cannot set the model: want /model NAME [THINKING]."},
		{"mode", "sometimes", `Cannot set the mode: unknown permission mode "sometimes" (want one of default, accept-edits, auto, bypass, read-only, plan).`},
		{"mode", "auto", "Cannot set the mode: " + agent.ErrNoSandbox.Error() + "."},
		{"compact", "", "There is nothing to compact yet."},
	} {
		r, err := s.Submit(context.Background(), Input{Text: "/" + tc.name + " " + tc.args, Where: Both})
		if err != nil || r.Text != tc.want {
			t.Errorf("/%s %s = %q, %v; want %q", tc.name, tc.args, r.Text, err, tc.want)
		}
	}
	if st := s.Status(); st.Model != "claude-sonnet-4-5" || st.Thinking != "" || st.Mode != agent.ModeBypass {
		t.Errorf("bad arguments changed the session: %+v", st)
	}
	r, err := s.Submit(context.Background(), Input{Text: "/model", Where: Both})
	if err != nil || len(r.Models) != 2 || !strings.Contains(r.Text, "- claude-haiku-4-5 (Claude Haiku 4.5)") {
		t.Errorf("/model = %q (%d models), %v; want the list", r.Text, len(r.Models), err)
	}
	if r, _ := s.Submit(context.Background(), Input{Text: "/mode", Where: Both}); r.Text != "The permission mode is bypass. Modes: default, accept-edits, bypass, read-only, plan." {
		t.Errorf("/mode = %q", r.Text)
	}
	if _, err := s.Submit(context.Background(), Input{Text: "/greet", Where: Both}); !errors.Is(err, ErrUnknownCommand) {
		t.Errorf("/greet in the host: %v, want ErrNotBuiltin", err)
	}
}

// unschematic's parameters have no JSON schema (a channel): a tool of them
// panics when its schema is built.
type unschematic struct {
	C chan int `json:"c"`
}

// A session that calls no model (dsh tool) opens, runs a call and publishes
// its status without building the model's tool list: the tools' schemas are
// most of a start's work, and only the called tool's is needed.
func TestNoModelStatusBuildsNoToolList(t *testing.T) {
	o := options(t, t.TempDir(), t.TempDir(), nil)
	o.Provider = nil // no model runs
	o.Tools = []tool.Tool{tool.New(tool.Spec[unschematic, tool.NoMeta]{Name: "bad", Kind: card.ToolOther,
		Execute: func(context.Context, tool.Env, unschematic, *tool.NoMeta) (tool.Result, *tool.NoMeta, error) {
			return tool.Text("ran"), nil, nil
		}})}
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	var events statusLog
	sub := s.Subscribe(func(e Event) {
		if e.Kind == KindStatus {
			events.mu.Lock()
			events.sts = append(events.sts, e.Status)
			events.mu.Unlock()
		}
	})
	defer sub.Close()
	if err := os.WriteFile(filepath.Join(s.Root(), "a.txt"), []byte("one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := s.RunTool(t.Context(), "read", []byte(`{"path":"a.txt"}`))
	if err != nil || res.IsError {
		t.Fatalf("read: %q, %v", res.TextOf(), err)
	}
	sub.Flush(time.Second)
	if st := events.last(t); st.Mode != agent.ModeBypass || st.ContextTokens == 0 {
		t.Errorf("status after the call = %+v, want the call's tokens counted", st)
	}
}
