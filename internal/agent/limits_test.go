package agent

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// A turn with a dollar budget ends once what the session spent since it began
// reaches it; what was spent before the turn does not count.
func TestCostBudget(t *testing.T) {
	for _, tt := range []struct {
		name  string
		limit float64
		want  []string
		stop  StopReason
	}{
		{"under", 10, []string{"user go", `call x look {"id":"x"}`, "result x ok: look x done",
			`call y look {"id":"y"}`, "result y ok: look y done", "assistant done", "end end_turn"}, StopEndTurn},
		{"reached", 0.5, []string{"user go", `call x look {"id":"x"}`, "result x ok: look x done",
			`call y look {"id":"y"}`, "result y ok: look y done", "end budget"}, StopBudget},
		{"first call", 0.25, []string{"user go", `call x look {"id":"x"}`, "result x ok: look x done", "end budget"}, StopBudget},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			spent := 5.0 // earlier turns' cost
			p := scripted(t, `{"turns": [
				{"tool_calls": [{"id": "x", "name": "look", "args": {"id": "x"}}]},
				{"tool_calls": [{"id": "y", "name": "look", "args": {"id": "y"}}]},
				{"text": "done"}]}`)
			a := New(Config{Provider: p, Registry: tool.NewRegistry((&probe{}).tools()...), Log: e.log, Tools: e.tools,
				MaxCost: tt.limit, Spent: func() float64 { return spent }, OnUsage: func(session.Usage) { spent += 0.25 }})
			stop, err := a.Prompt(t.Context(), "go")
			if err != nil || stop != tt.stop {
				t.Fatalf("Prompt = %v, %v; want %v", stop, err, tt.stop)
			}
			if got := summary(e.records(t)); !slices.Equal(got, tt.want) {
				t.Errorf("log = %q, want %q", got, tt.want)
			}
		})
	}
}

// A turn whose context ends with ErrTimeLimit stops as a timeout, logged so;
// any other end of it is the user's cancel.
func TestTimeLimit(t *testing.T) {
	for _, tt := range []struct {
		name  string
		cause error
		want  StopReason
	}{
		{"time limit", ErrTimeLimit, StopTimeout},
		{"user", nil, StopCancelled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			ctx, cancel := context.WithCancelCause(t.Context())
			p := &fakeProvider{turns: []turnFunc{func(ctx context.Context, _ provider.Request) (*provider.Response, error) {
				cancel(tt.cause)
				<-ctx.Done()
				return nil, ctx.Err()
			}}}
			a := e.agent(p, tool.NewRegistry(), ModeDefault, nil)
			stop, err := a.Prompt(ctx, "go")
			if err != nil || stop != tt.want {
				t.Fatalf("Prompt = %v, %v; want %v", stop, err, tt.want)
			}
			if got := summary(e.records(t)); !slices.Equal(got, []string{"user go", "end " + string(tt.want)}) {
				t.Errorf("log = %q", got)
			}
		})
	}
	// A deadline set with the cause, as dsh run --timeout sets it.
	e := newEnv(t)
	ctx, cancel := context.WithTimeoutCause(t.Context(), time.Millisecond, ErrTimeLimit)
	defer cancel()
	p := &fakeProvider{turns: []turnFunc{func(ctx context.Context, _ provider.Request) (*provider.Response, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}}
	if stop, err := e.agent(p, tool.NewRegistry(), ModeDefault, nil).Prompt(ctx, "go"); err != nil || stop != StopTimeout {
		t.Fatalf("Prompt = %v, %v; want a timeout", stop, err)
	}
}

// A model that is overloaded or unavailable hands the turn to the fallback
// model, once, logged with why; other failures, or the fallback's own, end
// the turn.
func TestFallbackModel(t *testing.T) {
	overloaded := func(context.Context, provider.Request) (*provider.Response, error) {
		return nil, fmt.Errorf("model x: %w", unavailableErr)
	}
	ok := func(_ context.Context, req provider.Request) (*provider.Response, error) {
		return reply(text("answered by "+req.Model))(context.Background(), req)
	}
	for _, tt := range []struct {
		name     string
		fallback string
		turns    []turnFunc
		stop     StopReason
		want     []string
	}{
		{"falls back", "small", []turnFunc{overloaded, ok}, StopEndTurn,
			[]string{"user go", "model small ", "assistant answered by small", "end end_turn"}},
		{"fallback fails too", "small", []turnFunc{overloaded, overloaded}, StopError,
			[]string{"user go", "model small ", "end error (model fake: model x: the model is overloaded or unavailable)"}},
		{"none configured", "", []turnFunc{overloaded}, StopError,
			[]string{"user go", "end error (model fake: model x: the model is overloaded or unavailable)"}},
		{"other failure", "small", []turnFunc{func(context.Context, provider.Request) (*provider.Response, error) {
			return nil, fmt.Errorf("401 bad key")
		}}, StopError, []string{"user go", "end error (model fake: 401 bad key)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			p := &fakeProvider{turns: tt.turns}
			a := New(Config{Provider: p, Registry: tool.NewRegistry(), Log: e.log, Tools: e.tools, Model: "big", FallbackModel: tt.fallback})
			stop, _ := a.Prompt(t.Context(), "go")
			if stop != tt.stop {
				t.Fatalf("stop = %v, want %v", stop, tt.stop)
			}
			recs := e.records(t)
			if got := summary(recs); !slices.Equal(got, tt.want) {
				t.Errorf("log = %q, want %q", got, tt.want)
			}
			for _, r := range recs {
				if r.Type == "model" && r.Text == "" {
					t.Errorf("the model record does not say why: %+v", r)
				}
			}
		})
	}
}

// unavailableErr is a failure retries gave up on, as provider.Retry returns it.
var unavailableErr = func() error {
	_, err := provider.Retry(context.Background(), -1, nil, func() (*provider.Response, error) {
		return nil, &provider.TransientError{Err: provider.ErrUnavailable}
	})
	return err
}()
