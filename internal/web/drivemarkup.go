package web

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/session/usage"
)

// The markup of a driven session: the composer under the log, the status bar,
// and the boxes of permission requests and questions that wait for the user.

// askView is a permission request or a question as its box shows it.
type askView struct {
	Key      string
	CallElem string // the element of the call it is about
	Tool     string
	Call     *callView
	// A permission: what "always" remembers, if it may.
	Perm     bool
	Label    string
	Remember bool
	// A question.
	Question string
	Choices  []card.Choice
	FreeText bool
}

func (b *builder) askView(a *ask) askView {
	if p := a.perm; p != nil {
		r := p.Request
		v := askView{Key: a.key, CallElem: callElemID(r.CallID), Tool: r.Tool, Perm: true,
			Label: r.Approval.Label, Remember: r.Approval.Remember}
		if r.Card != nil {
			v.Call = b.callCard(r.CallID, r.Card)
		}
		return v
	}
	r := a.q.Request
	v := askView{Key: a.key, CallElem: callElemID(r.CallID), Tool: r.Tool,
		Question: r.Question.Text, Choices: r.Question.Choices, FreeText: r.Question.FreeText}
	if r.Card != nil {
		v.Call = b.callCard(r.CallID, r.Card)
	}
	return v
}

// answerRequest is the body of an answer: a decision for a permission, a
// choice's id or text of one's own for a question.
type answerRequest struct {
	Decision string `json:"decision"`
	Choice   string `json:"choice"`
	Text     string `json:"text"`
}

// questionAnswer is the answer r gives q: one of its choices, or free text
// where it takes that; an empty answer chose none.
func questionAnswer(q *host.Question, r answerRequest) (card.Answer, error) {
	if r.Choice != "" {
		for _, c := range q.Request.Question.Choices {
			if c.ID == r.Choice {
				return card.Answer{ID: c.ID, Text: c.Label}, nil
			}
		}
		return card.Answer{}, fmt.Errorf("no choice %q", r.Choice)
	}
	if r.Text != "" && !q.Request.Question.FreeText {
		return card.Answer{}, errors.New("this question takes one of its choices, not text")
	}
	return card.Answer{Text: r.Text}, nil
}

// ask is an "ask" event: the box of a waiting permission request or question.
// Its buttons carry what they answer; the script posts it.
func (o out) ask(a askView) {
	o.raw("<section class=\"ask\" id=\"ask-")
	o.esc(a.Key)
	o.raw("\" data-ask=\"")
	o.esc(a.Key)
	o.raw("\" data-call=\"")
	o.esc(a.CallElem)
	o.raw("\"><p class=\"ask-head\">")
	if a.Perm {
		o.raw("Allow <code>")
		o.esc(a.Tool)
		o.raw("</code>?")
	} else {
		o.esc(a.Question)
	}
	o.raw("</p>")
	if a.Call != nil {
		o.call(a.Call)
	}
	o.raw("<div class=\"ask-actions\">")
	if a.Perm {
		o.raw("<button type=\"button\" data-decision=\"allow_once\">Allow once</button>")
		if a.Remember {
			o.raw("<button type=\"button\" data-decision=\"allow_always\">Always allow ")
			o.esc(a.Label)
			o.raw("</button>")
		}
		o.raw("<button type=\"button\" data-decision=\"reject\">Reject</button>")
	} else {
		for _, c := range a.Choices {
			o.raw("<button type=\"button\" data-choice=\"")
			o.esc(c.ID)
			o.raw("\">")
			o.esc(c.Label)
			o.raw("</button>")
		}
		if a.FreeText {
			o.raw("<input type=\"text\" name=\"answer\" placeholder=\"your answer\"><button type=\"button\" data-free=\"1\">Answer</button>")
		}
		o.raw("<button type=\"button\" data-choice=\"\">None</button>")
	}
	o.raw("</div></section>")
}

// delta is a "delta" event: a piece of the model's text or thinking as it
// streams.
func (o out) delta(d provider.Delta) {
	o.raw("<span class=\"delta")
	if d.Type == provider.DeltaThinking {
		o.raw(" thinking")
	}
	o.raw("\">")
	o.esc(d.Text)
	o.raw("</span>")
}

// notice is a "notice" event: what the user is told about their input.
func (o out) notice(text string) {
	o.raw("<p class=\"item note notice\" data-item=\"notice\">")
	o.esc(text)
	o.raw("</p>")
}

// status is a "status" event: the session's facts as the host publishes them.
func (o out) status(st host.Status) {
	o.raw("<p id=\"status\" class=\"status-bar\" data-state=\"")
	o.esc(string(st.State))
	o.raw("\" data-mode=\"")
	o.esc(string(st.Mode))
	o.raw("\" data-model=\"")
	o.esc(st.Model)
	o.raw("\" data-thinking=\"")
	o.esc(st.Thinking)
	o.raw("\"><span class=\"badge st-")
	o.esc(string(st.State))
	o.raw("\">")
	o.esc(string(st.State))
	o.raw("</span> <span class=\"model\">")
	o.esc(cmp.Or(st.Model, "default model"))
	if st.Thinking != "" {
		o.raw(" · thinking ")
		o.esc(st.Thinking)
	}
	o.raw("</span> · mode <span class=\"mode\">")
	o.esc(string(st.Mode))
	o.raw("</span>")
	if st.Window > 0 {
		o.raw(" · context ")
		o.int(st.ContextTokens * 100 / st.Window)
		o.raw("%")
	}
	o.raw(" · <span class=\"cost\">")
	o.tokens(usageView{Totals: totalsOf(st)})
	o.raw("</span>")
	if line := plainLine(st.Line); line != "" {
		o.raw(" · <span class=\"user-line\">") // Claude Code's statusLine
		o.esc(line)
		o.raw("</span>")
	}
	o.raw("</p>")
}

// plainLine is a line the user's command printed for a terminal, as text:
// its escape sequences (colours) and control characters dropped.
func plainLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return -1
		}
		return r
	}, ansi.Strip(s))
}

// composer is the form under a driven session's log: what to send, what to
// attach, and the session's mode, model and thinking (each change is sent as
// its slash command, through the same door as a prompt).
func (o out) composer(c composerView) {
	o.raw("<form id=\"composer\" data-base=\"/s/")
	o.urlPart(c.ID)
	o.raw("\" data-control=\"/s/")
	o.urlPart(c.ID)
	o.raw("/control\">\n<div id=\"stream\" class=\"stream\"></div>\n<div id=\"asks\"></div>\n")
	o.status(c.Status)
	o.raw("<textarea name=\"text\" rows=\"3\" placeholder=\"A prompt, a /command or an @file — Enter sends, Shift+Enter a new line\"></textarea>\n" +
		"<div class=\"composer-row\"><input type=\"file\" name=\"files\" multiple>" +
		"<button type=\"submit\" data-action=\"send\">Send</button>" +
		"<button type=\"button\" data-action=\"cancel\">Cancel</button>" +
		"<button type=\"button\" data-command=\"/undo\">Undo</button>" +
		"<button type=\"button\" data-command=\"/rewind\">Rewind…</button>" +
		"<label>mode <select name=\"mode\">")
	for _, m := range host.ModesFor(c.Status) {
		o.option(string(m), string(m), m == c.Status.Mode)
	}
	o.raw("</select></label><label>model <select name=\"model\">")
	o.option("", cmp.Or(c.Status.Model, "default"), true)
	for _, m := range c.Models {
		if m.ID != c.Status.Model {
			o.option(m.ID, cmp.Or(m.Name, m.ID), false)
		}
	}
	o.raw("</select></label><label>thinking <select name=\"thinking\">")
	for _, t := range host.ThinkingLevels {
		o.option(t.Value, t.Name, t.Value == cmp.Or(c.Status.Thinking, host.ThinkingDefault))
	}
	o.raw("</select></label><input type=\"text\" name=\"title\" placeholder=\"a name for this session\">" +
		"<button type=\"button\" data-action=\"rename\">Rename</button></div>\n</form>\n")
}

func (o out) option(value, label string, selected bool) {
	o.raw("<option value=\"")
	o.esc(value)
	o.raw("\"")
	if selected {
		o.raw(" selected")
	}
	o.raw(">")
	o.esc(label)
	o.raw("</option>")
}

// composerView is a driven session's composer.
type composerView struct {
	ID     string
	Status host.Status
	Models []host.Model
}

// sessionActions are the buttons of a session page the server does not
// drive: continue it here (a finished one), join it (one live in another
// process), delete it.
func (o out) sessionActions(id string, resume, join, del bool) {
	o.raw("<p class=\"actions\" data-base=\"/s/")
	o.urlPart(id)
	o.raw("\">")
	if resume {
		o.raw("<button type=\"button\" data-post=\"resume\">Continue this session here</button>")
	}
	if join {
		o.raw("<button type=\"button\" data-post=\"join\">Join this live session</button>")
	}
	if del {
		o.raw("<input type=\"text\" name=\"title\" placeholder=\"a name for this session\">" +
			"<button type=\"button\" data-post=\"rename\">Rename</button>" +
			"<button type=\"button\" data-post=\"delete\">Delete</button>")
	}
	o.raw("</p>")
}

// newSession is the list's form that starts a session in a directory the
// server was given (or one under it).
func (o out) newSession(roots []string) {
	o.raw("<form id=\"new-session\" class=\"new\"><label>Start a session in <input name=\"dir\" list=\"roots\" size=\"60\" value=\"")
	if len(roots) > 0 {
		o.esc(roots[0])
	}
	o.raw("\"></label><datalist id=\"roots\">")
	for _, r := range roots {
		o.option(r, r, false)
	}
	o.raw("</datalist><button type=\"submit\">Start</button><div id=\"trust\"></div></form>\n")
}

func totalsOf(st host.Status) (t usage.Totals) {
	t.InputTokens, t.OutputTokens, t.Cost, t.Unpriced = st.InputTokens, st.OutputTokens, st.Cost, st.Unpriced
	return t
}
