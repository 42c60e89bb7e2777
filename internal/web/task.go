package web

import (
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/session"
)

// A task's cards: the call names the subagent and its prompt; the result
// holds the subagent's own timeline, read from its child session's log (the
// result names it), under a summary, then the answer the parent model read.
// The page and the event stream build it alike, so live equals reloaded.

// taskView is a finished task.
type taskView struct {
	Summary string
	OK      bool
	Text    safeHTML
	Session string      // the child session, which has a page of its own
	Items   []*itemView // its timeline
	Missing string      // why the timeline is not shown
}

// maxNested bounds the records of a child's timeline drawn under its task:
// its own page shows all of it.
const maxNested = 2000

func (b *builder) task(c *card.TaskResult) *taskView {
	v := &taskView{Summary: c.Summary(), OK: c.Stop == "end_turn", Text: markdown(c.Text), Session: c.Session}
	path, err := session.ChildPath(b.s.o.Dir, c.Session)
	if err != nil {
		v.Missing = err.Error()
		return v
	}
	recs, err := session.ReadFile(path)
	if err != nil {
		v.Missing = "the subagent's log cannot be read"
		return v
	}
	if len(recs) > maxNested {
		recs, v.Missing = recs[:maxNested], "the rest is on the subagent's own page"
	}
	pg := b.s.sessionPage(c.Session, recs, false)
	for it := range pg.Items {
		if it.Type != "user" { // the prompt is the call's
			v.Items = append(v.Items, it)
		}
	}
	return v
}

func (o out) taskCall(c *card.TaskCall) {
	o.raw("<div class=\"card task-call\" data-card=\"task-call\"><div class=\"card-head\"><span class=\"agent\">")
	o.esc(c.Agent)
	o.raw("</span> ")
	o.title(c.Title)
	o.raw("</div><p class=\"prompt\">")
	o.esc(c.Prompt)
	o.raw("</p></div>")
}

func (o out) taskResult(t *taskView) {
	o.raw("<div class=\"card task-result\" data-card=\"task-result\"><details class=\"nested\" open><summary>")
	o.esc(t.Summary)
	o.raw(" · <a href=\"/s/")
	o.urlPart(t.Session)
	o.raw("\">its session</a></summary><div class=\"timeline nested\" data-session=\"")
	o.esc(t.Session)
	o.raw("\">")
	for _, it := range t.Items {
		o.item(it)
	}
	if t.Missing != "" {
		o.raw("<p class=\"none\">")
		o.esc(t.Missing)
		o.raw("</p>")
	}
	o.raw("</div></details><p class=\"answer")
	if t.OK {
		o.raw(" ok")
	}
	o.raw("\">→ answer</p><div class=\"md\">")
	o.raw(string(t.Text))
	o.raw("</div></div>")
}
