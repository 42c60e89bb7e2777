package lsp

import (
	"context"
	"fmt"
	"sync"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// Trust is whether a project's language servers may start. A server is a
// program the repository steers — a toolchain file picks the rust-analyzer
// that runs, build scripts and proc macros run, a workspace's own tsserver
// would load — so none starts before the user trusts the folder. A session
// and its subagents share one.
type Trust struct {
	mu     sync.Mutex
	state  trustState
	told   bool       // the model was told that no server runs here
	asking sync.Mutex // one question at a time
	record func() error
	also   string
}

type trustState int

const (
	undecided trustState = iota
	trusted
	declined
)

// NewTrust is a project's trust as the settings know it: trusted, or
// declined (the user answered no: not asked again), else undecided. record
// writes the user's yes for later sessions, as the chat's "Trust this
// folder?" does (nil: this session only); also says what else trusting the
// folder lets it do ("" nothing), for the question.
func NewTrust(isTrusted, isDeclined bool, record func() error, also string) *Trust {
	t := &Trust{record: record, also: also}
	switch {
	case isTrusted:
		t.state = trusted
	case isDeclined:
		t.state = declined
	}
	return t
}

// Trusted reports whether the servers may start.
func (t *Trust) Trusted() bool {
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.state == trusted
}

// The answers of the question.
const (
	answerTrust   = "trust"
	answerSession = "session"
	answerNo      = "no"
)

// Permit says whether the server for path may run, asking the user once
// while the project is undecided. ask is how (nil: no one can be asked, or
// the session's mode changes nothing — read-only, plan — where starting a
// server would be the one thing the call ran). note is what the call's result
// says of it: when the server may not run, why, once a session; when the
// user's yes could not be recorded, that ("" nothing to tell).
func (m *Manager) Permit(ctx context.Context, path string, ask func(context.Context, tool.Question) (card.Answer, error)) (ok bool, note string) {
	lang, _ := languageOf(path)
	if lang == nil || !m.Checks(path) {
		return false, ""
	}
	t := m.cfg.Trust
	if t.Trusted() {
		return true, ""
	}
	if t == nil {
		return false, ""
	}
	t.asking.Lock()
	defer t.asking.Unlock()
	t.mu.Lock()
	state := t.state
	t.mu.Unlock()
	if state == undecided && ask != nil {
		var err error
		if state, err = t.ask(ctx, m.serverName(lang), ask); err != nil {
			note = fmt.Sprintf("(The user trusts this folder for this session; recording it for later ones failed: %v.)", err)
		}
	}
	if state == trusted {
		return true, note
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.told {
		return false, ""
	}
	t.told = true
	return false, "No diagnostics: language servers do not run in this folder until the user trusts it (a server runs code the repository controls)."
}

// ask puts the question and keeps the answer: a yes for the folder is
// recorded, any answer holds for this session. The error is the recording's.
func (t *Trust) ask(ctx context.Context, server string, ask func(context.Context, tool.Question) (card.Answer, error)) (trustState, error) {
	text := fmt.Sprintf("Start %s to check this folder's files? A language server runs code the repository controls "+
		"(its toolchain files, build scripts, plugins). Trust this folder?", server)
	if t.also != "" {
		text += " Trusting it also lets " + t.also + "."
	}
	choices := []card.Choice{
		{ID: answerSession, Label: "Yes, for this session"},
		{ID: answerNo, Label: "No"},
	}
	if t.record != nil {
		choices = append([]card.Choice{{ID: answerTrust, Label: "Yes, trust this folder"}}, choices...)
	}
	a, err := ask(ctx, tool.Question{Text: text, Choices: choices})
	state := declined
	if err == nil && (a.ID == answerTrust || a.ID == answerSession) {
		state = trusted
	}
	t.mu.Lock()
	t.state = state
	t.mu.Unlock()
	if err == nil && a.ID == answerTrust && t.record != nil {
		return state, t.record()
	}
	return state, nil
}
