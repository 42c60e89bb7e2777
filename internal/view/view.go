// Package view turns a session's record stream into what consumers show: messages
// and cards. It is the one place where records meet presenters, so the terminal,
// the web page and the ACP bridge — live or on replay — all see the same cards.
package view

import (
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// Item is one record with its cards. Call is set for tool_call records; for
// tool_result records Call is the card of the call it answers and Result is the
// result card (nil: show Record.Result.Content raw).
type Item struct {
	Record session.Record
	Call   card.Call
	Result card.Result
}

// Presenter remembers each call's record and card so that its progress and
// result, which arrive later in the stream, are presented from the same data
// (and the call card is made once).
type Presenter struct {
	reg   *tool.Registry
	calls map[string]seenCall
}

type seenCall struct {
	rec  session.Record
	card card.Call
}

// NewPresenter returns a presenter for a session's records.
func NewPresenter(reg *tool.Registry) *Presenter {
	return &Presenter{reg: reg, calls: map[string]seenCall{}}
}

// Present returns the item for r. It is a pure function of the records seen so far.
func (p *Presenter) Present(r session.Record) Item {
	it := Item{Record: r}
	switch r.Type {
	case session.TypeToolCall:
		it.Call = p.reg.PresentCall(r.Name, r.Args, nil)
		p.calls[r.CallID] = seenCall{rec: r, card: it.Call}
	case session.TypeToolResult:
		c, ok := p.calls[r.CallID]
		if !ok {
			return it
		}
		it.Call = c.card
		if r.Result != nil {
			it.Result = p.reg.PresentResult(c.rec.Name, c.rec.Args, *r.Result)
		}
	case session.TypeProgress:
		it.Call = p.calls[r.CallID].card
	case session.TypeHeader, session.TypeUser, session.TypeAssistant, session.TypeThinking,
		session.TypePlan, session.TypeTurnEnd:
	}
	return it
}

// CallName returns the tool name of a call seen so far.
func (p *Presenter) CallName(callID string) string { return p.calls[callID].rec.Name }
