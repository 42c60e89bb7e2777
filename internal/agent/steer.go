package agent

import (
	"fmt"

	"github.com/dsh-dev/dsh/internal/session"
)

// steered logs what the user sent to steer the running turn (Config.Steer)
// as their messages, so the model has them at its next step, as sent.
func (a *Agent) steered() error {
	if a.c.Steer == nil {
		return nil
	}
	for _, text := range a.c.Steer() {
		if err := a.record(session.Record{Type: session.TypeUser, Text: text}); err != nil {
			return fmt.Errorf("log the steering prompt: %w", err)
		}
	}
	return nil
}
