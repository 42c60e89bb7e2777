package agent

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// msgInterrupted answers a logged call that has no logged result (the process
// died mid-call), so the restored conversation is still one the APIs accept.
const msgInterrupted = "The call was interrupted before it finished; its effects, if any, are unknown."

// builder folds log records into the model conversation: prompts become user
// messages, thinking (with its signature), text and tool calls become assistant
// messages, and tool results become user messages of tool_result parts. Every
// tool call is answered by exactly one result, in call order, once all of its
// message's calls have one (or the next message begins: the log lacks the rest
// when dsh died mid-call); a result whose call is not open is dropped. Result text
// is capped at outputCap. It is the one place the context is made, live and on
// reload alike.
type builder struct {
	outputCap int
	msgs      []provider.Message
	open      []string
	results   map[string]provider.Part
}

func (b *builder) fold(r session.Record) {
	switch r.Type {
	case session.TypeUser:
		b.closeCalls()
		b.add(provider.RoleUser, provider.Part{Type: provider.PartText, Text: r.Text})
	case session.TypeAssistant:
		b.closeAnswered()
		b.add(provider.RoleAssistant, provider.Part{Type: provider.PartText, Text: r.Text})
	case session.TypeThinking:
		b.closeAnswered()
		b.add(provider.RoleAssistant, provider.Part{Type: provider.PartThinking, Text: r.Text, Signature: r.Signature})
	case session.TypeToolCall:
		// A call after results starts the next message, unless it continues the
		// message whose earlier calls those results answer.
		if len(b.results) > 0 && !r.Continues {
			b.closeCalls()
		}
		args := r.Args
		if len(args) == 0 {
			args = jsontext.Value("{}")
		}
		b.add(provider.RoleAssistant, provider.Part{Type: provider.PartToolUse, ID: r.CallID, Name: r.Name, Args: args})
		b.open = append(b.open, r.CallID)
	case session.TypeToolResult:
		b.result(r)
	case session.TypeTurnEnd:
		b.closeCalls()
	case session.TypeHeader, session.TypeProgress, session.TypePlan, session.TypeMode, session.TypeAllow, session.TypeModel, session.TypeDamaged:
	}
}

// messages returns the conversation so far; open calls without results are
// answered as interrupted only in the copy handed out, so a turn still running
// can add their results.
func (b *builder) messages() []provider.Message {
	if len(b.open) == 0 {
		return b.msgs
	}
	c := *b
	c.msgs = append([]provider.Message(nil), b.msgs...)
	c.closeCalls()
	return c.msgs
}

func (b *builder) add(role provider.Role, p provider.Part) {
	if n := len(b.msgs); n > 0 && b.msgs[n-1].Role == role {
		// A full slice copies; a message handed out never sees later parts.
		last := &b.msgs[n-1]
		last.Parts = append(last.Parts[:len(last.Parts):len(last.Parts)], p)
		return
	}
	b.msgs = append(b.msgs, provider.Message{Role: role, Parts: []provider.Part{p}})
}

func (b *builder) result(r session.Record) {
	found := false
	for _, id := range b.open {
		found = found || id == r.CallID
	}
	if !found {
		return
	}
	if b.results == nil {
		b.results = map[string]provider.Part{}
	}
	res := tool.Result{}
	if r.Result != nil {
		res = *r.Result
	}
	b.results[r.CallID] = provider.Part{Type: provider.PartToolResult, ID: r.CallID, Content: capContent(res.Content, b.outputCap), IsError: res.IsError}
}

// closeAnswered closes the open calls once results for them have been logged:
// text after results starts the next message, text before them belongs to the
// same message as the calls.
func (b *builder) closeAnswered() {
	if len(b.results) > 0 {
		b.closeCalls()
	}
}

// closeCalls emits the user message that answers the open calls, in call order,
// filling in any result the log lacks.
func (b *builder) closeCalls() {
	if len(b.open) == 0 {
		return
	}
	for _, id := range b.open {
		p, ok := b.results[id]
		if !ok {
			p = provider.Part{Type: provider.PartToolResult, ID: id, Content: tool.Errorf(msgInterrupted).Content, IsError: true}
		}
		b.add(provider.RoleUser, p)
	}
	b.open, b.results = nil, nil
}
