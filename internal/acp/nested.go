package acp

import (
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/session"
)

// A subagent's calls (a task's child session) are ordinary tool calls whose
// id is the parent's task call and the child's call joined by a slash, with
// _meta.dsh.parentToolCallId naming the task call, so a client can nest them;
// the task's own final update sums them up for a client that does not.

// child is the bridge of one child session's records.
type child struct {
	br     *bridge
	call   string   // the parent's task call
	titles []string // its calls, for the task's summary
}

// child returns the bridge of the child session id under the task call.
func (b *bridge) child(call, id string) *child {
	if c, ok := b.children[id]; ok {
		return c
	}
	if b.children == nil {
		b.children = map[string]*child{}
	}
	c := &child{br: newBridge(b.cwd, b.termMeta, b.pres.Nested()), call: call}
	c.br.replaying = b.replaying
	b.children[id] = c
	return c
}

// nestedID is a child call's id as the client sees it.
func nestedID(call, id string) string { return call + "/" + id }

// childUpdates is what a child record shows: its calls, their output and
// results; its text is the task's result.
func (b *bridge) childUpdates(call, id string, rec session.Record, replay bool) []sdk.SessionUpdate {
	switch rec.Type {
	case session.TypeToolCall, session.TypeProgress, session.TypeToolResult:
	case session.TypeHeader, session.TypeUser, session.TypeAssistant, session.TypeThinking, session.TypePlan,
		session.TypeTurnEnd, session.TypeMode, session.TypeAllow, session.TypeCompaction, session.TypeInstructions,
		session.TypeModel, session.TypeCheckpoint, session.TypeRestore, session.TypeDamaged, session.TypeCommand, session.TypeReply, session.TypeDecision, session.TypeTitle:
		return nil
	case session.TypeHook:
		// A hook that ran for a child's call: its card under the task too,
		// its id the child's so it cannot meet the parent's hook cards.
		us := b.child(call, id).br.updates(rec, replay)
		for _, u := range us {
			switch {
			case u.ToolCall != nil:
				u.ToolCall.ToolCallId = sdk.ToolCallId(nestedID(call, string(u.ToolCall.ToolCallId)))
			case u.ToolCallUpdate != nil:
				u.ToolCallUpdate.ToolCallId = sdk.ToolCallId(nestedID(call, string(u.ToolCallUpdate.ToolCallId)))
			}
			link(u, call)
		}
		return us
	}
	c := b.child(call, id)
	rec.CallID = nestedID(call, rec.CallID)
	us := c.br.updates(rec, replay)
	for _, u := range us {
		if u.ToolCall != nil && rec.Type == session.TypeToolCall {
			c.titles = append(c.titles, u.ToolCall.Title)
		}
		link(u, call)
	}
	return us
}

// childStart is a child call starting to run.
func (b *bridge) childStart(call, id, callID string) (sdk.SessionUpdate, bool) {
	u, ok := b.child(call, id).br.start(nestedID(call, callID))
	if ok {
		link(u, call)
	}
	return u, ok
}

// link puts the parent's task call in an update's _meta.dsh.
func link(u sdk.SessionUpdate, call string) {
	switch {
	case u.ToolCall != nil:
		u.ToolCall.Meta = linked(u.ToolCall.Meta, call)
	case u.ToolCallUpdate != nil:
		u.ToolCallUpdate.Meta = linked(u.ToolCallUpdate.Meta, call)
	}
}

func linked(meta map[string]any, call string) map[string]any {
	if meta == nil {
		meta = map[string]any{}
	}
	d, _ := meta["dsh"].(map[string]any)
	if d == nil {
		d = map[string]any{}
	}
	d["parentToolCallId"] = call
	meta["dsh"] = d
	return meta
}

// replayChild sends, on a replay, the child session a task's result names,
// from its log, before the result: as the live stream nested it.
func (b *bridge) replayChild(r *card.TaskResult, call string) []sdk.SessionUpdate {
	if b.logPath == "" || r.Session == "" {
		return nil
	}
	if _, seen := b.children[r.Session]; seen {
		return nil
	}
	var out []sdk.SessionUpdate
	err := host.ReplayChild(filepath.Dir(b.logPath), r.Session, func(rec session.Record) error {
		if rec.Type != session.TypeProgress {
			out = append(out, b.childUpdates(call, r.Session, rec, true)...)
		}
		return nil
	})
	if err != nil { // a child log that is gone leaves the summary
		return out
	}
	return append(out, b.child(call, r.Session).br.abandonAll()...)
}

// taskSummary is a task's final content: what it was, the calls it made,
// its answer.
func (b *bridge) taskSummary(r *card.TaskResult) []sdk.ToolCallContent {
	var s strings.Builder
	s.WriteString(r.Summary())
	if c, ok := b.children[r.Session]; ok {
		for _, t := range c.titles {
			s.WriteString("\n- " + t)
		}
	}
	out := []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(s.String()))}
	if r.Text != "" {
		out = append(out, sdk.ToolContent(sdk.TextBlock(r.Text)))
	}
	return out
}

// childQuestion is a subagent's question, about its call under the task.
func (b *bridge) childQuestion(q *host.Question) sdk.ToolCallUpdate {
	call := b.child(q.Parent, q.Child).br.permissionCall(nestedID(q.Parent, q.Request.CallID), nil, q.Request.Card)
	call.Meta = linked(call.Meta, q.Parent)
	return call
}

// childPermission is the toolCall of a subagent call's permission request.
func (b *bridge) childPermission(p *host.Permission) sdk.ToolCallUpdate {
	req := p.Request
	call := b.child(p.Parent, p.Child).br.permissionCall(nestedID(p.Parent, req.CallID), req.Args, req.Card)
	call.Meta = linked(call.Meta, p.Parent)
	return call
}
