package tool

import "testing"

type runner bool

func (r runner) Running() bool { return bool(r) }

type runnerKey struct{}

type otherKey struct{}

// TestRunning: a session runs a process when some state of it, or of the
// session that started it (a subagent's parent), says one runs.
func TestRunning(t *testing.T) {
	for _, tc := range []struct {
		name        string
		own, parent any // state of the session and of its parent; nil: none
		want        bool
	}{
		{name: "nothing", want: false},
		{name: "state that runs nothing", own: 42, parent: "x", want: false},
		{name: "its own process", own: runner(true), want: true},
		{name: "its processes ended", own: runner(false), parent: runner(false), want: false},
		{name: "its parent's process", parent: runner(true), want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent, child := NewSession("p", nil), NewSession("c", nil)
			child.Parent = parent
			for s, v := range map[*Session]any{child: tc.own, parent: tc.parent} {
				if v != nil {
					s.State(runnerKey{}, func() any { return v })
					s.State(otherKey{}, func() any { return "other" })
				}
			}
			if got := child.Running(); got != tc.want {
				t.Errorf("Running() = %v, want %v", got, tc.want)
			}
		})
	}
}
