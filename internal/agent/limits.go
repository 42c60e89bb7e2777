package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/session"
)

// cancelReason is why a turn whose context ended stops: its time limit, or
// the user.
func cancelReason(ctx context.Context) StopReason {
	if errors.Is(context.Cause(ctx), ErrTimeLimit) {
		return StopTimeout
	}
	return StopCancelled
}

// overCost says the turn has spent its dollar budget: the results of its
// last calls are logged, and the model is not asked again.
func (a *Agent) overCost(t *turnState) bool {
	return a.c.MaxCost > 0 && a.c.Spent != nil && a.c.Spent()-t.spent >= a.c.MaxCost
}

// fallback switches the session to the fallback model when model failed as
// overloaded or unavailable, logged with the reason so every view says why
// the model changed. It reports whether the call should be made again.
func (a *Agent) fallback(model, thinking string, err error) bool {
	fb := a.c.FallbackModel
	if fb == "" || fb == model || !errors.Is(err, provider.ErrUnavailable) {
		return false
	}
	was := model
	if was == "" {
		was = "the model"
	}
	why := fmt.Sprintf("%s is overloaded or unavailable; going on with the fallback model %s (%v)", was, fb, err)
	return a.record(session.Record{Type: session.TypeModel, Model: fb, Thinking: thinking, Text: why}) == nil
}
