package agent

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/attach"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/models"
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
// is capped at outputCap. Nested project instructions follow the results of the
// call that read under them. A compaction replaces everything before it with its
// summary and the instructions loaded so far, keeping its last Keep turns. It is
// the one place the context is made, live and on reload alike.
type builder struct {
	outputCap int
	msgs      []provider.Message
	est       int64 // the estimate of msgs, kept as parts come and go
	open      []string
	results   map[string]provider.Part
	// The tool outputs held, oldest first, for outputBudget.
	outputs     []outputRef
	outputBytes int
	// pending are instructions logged while calls were open: they go after the
	// calls' results, which must directly follow the calls.
	pending []provider.Part
	// turns are where each user prompt starts in msgs, for a compaction to keep
	// the recent ones.
	turns []pos
	// instr are the nested instructions folded so far, which a compaction keeps.
	instr []provider.Part
	// known is the provider's count of the context at the last model call (0:
	// none since the last compaction), when the estimate of msgs was base.
	known, base int64
	// compacted is set by a compaction until anything else enters the context.
	compacted bool
}

// pos is a part of msgs.
type pos struct{ msg, part int }

func (b *builder) fold(r session.Record) {
	switch r.Type {
	case session.TypeUser:
		b.closeCalls()
		b.turns = append(b.turns, b.next(provider.RoleUser))
		b.add(provider.RoleUser, provider.Part{Type: provider.PartText, Text: attach.ModelText(r.Text, r.Content)})
	case session.TypeAssistant:
		b.closeAnswered()
		b.add(provider.RoleAssistant, provider.Part{Type: provider.PartText, Text: r.Text})
	case session.TypeThinking:
		b.closeAnswered()
		b.add(provider.RoleAssistant, provider.Part{Type: provider.PartThinking, Text: r.Text, Signature: r.Signature})
	case session.TypeToolCall:
		if r.Aside { // its output is in the prompt logged next; its result finds no open call
			return
		}
		if r.Signature != "" { // a provider's own search, answered in its blocks: its result finds no open call
			b.closeAnswered()
			b.add(provider.RoleAssistant, searchPart(r))
			break
		}
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
		// Right after a compaction the turn's count is from before it.
		if r.Usage != nil && r.Usage.ContextTokens > 0 && !b.compacted {
			b.counted(r.Usage.ContextTokens, 0)
		}
	case session.TypeInstructions:
		p := instructionsPart(r)
		b.instr = append(b.instr, p)
		if len(b.open) > 0 {
			b.pending = append(b.pending, p)
		} else {
			b.add(provider.RoleUser, p)
		}
	case session.TypeCompaction:
		b.compact(r)
		return
	case session.TypeHook:
		// What a hook told the model: after the results of the calls open
		// (PostToolUse), else a user-side text (a prompt's, a stop's).
		if r.Hook == nil || r.Hook.Context == "" {
			return
		}
		p := provider.Part{Type: provider.PartText, Text: r.Hook.Context}
		if len(b.open) > 0 {
			b.pending = append(b.pending, p)
		} else {
			b.add(provider.RoleUser, p)
		}
	case session.TypeHeader, session.TypeProgress, session.TypePlan, session.TypeMode, session.TypeAllow, session.TypeModel, session.TypeDamaged, session.TypeCheckpoint, session.TypeRestore,
		session.TypeCommand, session.TypeReply, session.TypeDecision, session.TypeTitle: // the user's and dsh's, not the model's
		return
	}
	b.compacted = false
}

// next is where a part of role added now lands.
func (b *builder) next(role provider.Role) pos {
	if n := len(b.msgs); n > 0 && b.msgs[n-1].Role == role {
		return pos{n - 1, len(b.msgs[n-1].Parts)}
	}
	return pos{len(b.msgs), 0}
}

// compact replaces the context with r's summary, the instructions loaded so far
// and the last r.Keep turns (all of them if there are fewer), which keep their
// instructions only in the first place.
func (b *builder) compact(r session.Record) {
	b.closeCalls()
	msgs, turns := b.msgs, b.turns
	b.msgs, b.turns, b.est = nil, nil, 0
	b.outputs, b.outputBytes = nil, 0
	b.known, b.base, b.compacted = 0, 0, true
	b.add(provider.RoleUser, provider.Part{Type: provider.PartText, Text: summaryText(r)})
	isInstr := map[string]bool{}
	for _, p := range b.instr {
		if !isInstr[p.Text] {
			b.add(provider.RoleUser, p)
		}
		isInstr[p.Text] = true
	}
	if r.Keep <= 0 || len(turns) == 0 {
		return
	}
	kept := turns[max(len(turns)-r.Keep, 0):]
	starts := map[pos]bool{}
	for _, t := range kept {
		starts[t] = true
	}
	for i := kept[0].msg; i < len(msgs); i++ {
		m := msgs[i]
		for j, p := range m.Parts {
			if i == kept[0].msg && j < kept[0].part || p.Type == provider.PartText && isInstr[p.Text] && m.Role == provider.RoleUser {
				continue
			}
			if starts[pos{i, j}] {
				b.turns = append(b.turns, b.next(m.Role))
			}
			b.add(m.Role, p)
			if p.Type == provider.PartToolResult {
				b.track(p)
			}
		}
	}
}

// counted notes the provider's count of the context, of which extra tokens
// (estimated) are not folded yet: the response that was just counted.
func (b *builder) counted(n, extra int64) {
	b.known, b.base = n, b.estimate()+extra
}

// estimate is the estimated size of the messages: what is folded, plus the
// answers messages() gives the open calls (not less the older outputs those
// would elide: it errs high). It is asked at every record, so it does not walk
// the conversation.
func (b *builder) estimate() int64 {
	n := b.est
	for _, id := range b.open {
		if p, ok := b.results[id]; ok {
			n += models.EstimatePart(p)
		} else {
			n += models.EstimatePart(interrupted(id))
		}
	}
	for _, p := range b.pending {
		n += models.EstimatePart(p)
	}
	return n
}

// tokens is the size of the context: the provider's last count plus the
// estimate of what came since, or without a count, fixed (the system prompt
// and tools) plus the estimate of the messages. estimated is false only for
// an exact provider count.
func (b *builder) tokens(fixed int64) (n int64, estimated bool) {
	e := b.estimate()
	if b.known == 0 {
		return fixed + e, true
	}
	// The estimate of the answer just counted may differ from that of the
	// message it became: the context does not shrink below the count.
	return b.known + max(e-b.base, 0), e != b.base
}

// lastTurn is the estimated size of the messages of the last turn, and false
// when there is no turn before it to replace.
func (b *builder) lastTurn() (int64, bool) {
	if len(b.turns) < 2 {
		return 0, false
	}
	t := b.turns[len(b.turns)-1]
	var n int64
	for i, m := range b.messages()[t.msg:] {
		if i == 0 {
			m.Parts = m.Parts[t.part:]
		}
		n += models.EstimateMessage(m)
	}
	return n, true
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
	b.est += models.EstimatePart(p)
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
			p = interrupted(id)
		}
		b.add(provider.RoleUser, p)
		b.track(p)
	}
	for _, p := range b.pending {
		b.add(provider.RoleUser, p)
	}
	b.open, b.results, b.pending = nil, nil, nil
}

// interrupted answers a call whose result the log lacks.
func interrupted(id string) provider.Part {
	return provider.Part{Type: provider.PartToolResult, ID: id, Content: tool.Errorf(msgInterrupted).Content, IsError: true}
}
