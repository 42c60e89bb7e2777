package chat

import "time"

// permGrace is how long a permission prompt must have been on screen, and the
// user's typing paused, before a first key answers it. Keys typed ahead — the "a" of
// "and" in a prompt being written as the request arrives — go to the input
// instead, so that no answer is given that the user did not see to give.
const permGrace = 500 * time.Millisecond

// deliberate records a key press and says whether it may answer the box on
// screen: its first key must come at least permGrace after the box appeared
// and after the key before it; once one did, the rest of the answer is typed
// at any speed.
func (m *Model) deliberate() bool {
	now := m.cfg.Now()
	prev := m.typedAt
	m.typedAt = now
	if !m.accepted {
		m.accepted = now.Sub(m.permAt) >= permGrace && now.Sub(prev) >= permGrace
	}
	return m.accepted
}
