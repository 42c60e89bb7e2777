package lsp

import "github.com/dsh-dev/dsh/internal/tool"

// sessionKey keys a session's Manager in its tool state.
type sessionKey struct{}

// Attach makes m the session's manager: the file tools check their changes
// with it, and the session's Close shuts its servers down. Call it before
// the session's first tool runs.
func Attach(s *tool.Session, m *Manager) {
	s.State(sessionKey{}, func() any { return m })
}

// From returns the session's manager; one that checks nothing when none was
// attached (tests, sessions without diagnostics).
func From(s *tool.Session) *Manager {
	return s.State(sessionKey{}, func() any { return NewManager("", Config{Off: true}) }).(*Manager)
}
