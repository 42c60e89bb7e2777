package host

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/agent"
)

// With the bypass mode turned off by a policy, /mode lists and sets every
// mode but bypass, and refuses it naming the file; the status says so, for
// the consumers' mode lists (ModesFor).
func TestBypassTurnedOffInTheHost(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	o := options(t, root, dir, scripted(t, `{"turns": [{"text": "one"}]}`))
	o.Mode, o.NoBypass = agent.ModeDefault, "/etc/claude-code/managed-settings.json"
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	r, err := s.Submit(context.Background(), Input{Text: "/mode bypass", Where: Both})
	if err != nil || r.Text != "Cannot set the mode: the bypass mode is turned off by disableBypassPermissionsMode in /etc/claude-code/managed-settings.json." {
		t.Errorf("/mode bypass = %q, %v", r.Text, err)
	}
	if slices.Contains(s.Modes(), agent.ModeBypass) || !s.Status().NoBypass || s.Mode() != agent.ModeDefault {
		t.Errorf("modes %v, status %+v", s.Modes(), s.Status())
	}
	if r, _ := s.Submit(context.Background(), Input{Text: "/mode", Where: Both}); strings.Contains(r.Text, "bypass") {
		t.Errorf("/mode lists %q", r.Text)
	}
	if got := ModesFor(Status{Confined: true}); !slices.Contains(got, agent.ModeBypass) || !slices.Contains(got, agent.ModeAuto) {
		t.Errorf("ModesFor without the policy: %v", got)
	}
}
