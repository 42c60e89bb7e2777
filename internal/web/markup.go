package web

import (
	"strconv"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/termfold"
)

// The markup of the pages and of the fragments the event stream sends. A page's
// items are the very fragments the stream sends, so live equals reloaded.

// head is the start of every page, up to its body.
func (o out) head(title string) {
	o.raw("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" +
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>")
	o.esc(title)
	o.raw(" · dsh</title>\n<link rel=\"stylesheet\" href=\"/static/style.css\">\n" +
		"<link rel=\"stylesheet\" href=\"/static/chroma.css\">\n" +
		"<script src=\"/static/app.js\" defer></script>\n</head>\n")
}

const pageEnd = "</body>\n</html>\n"

func (o out) list(pg listPage) {
	o.head("sessions")
	o.raw("<body class=\"list\">\n<header class=\"top\"><h1>dsh sessions</h1><p class=\"dir\"><code>")
	o.esc(pg.Dir)
	o.raw("</code></p></header>\n<main>")
	if pg.Drive {
		o.newSession(pg.Roots)
	}
	if len(pg.Sessions) == 0 {
		o.raw("\n<p class=\"empty\">No sessions yet.</p>")
	} else {
		o.raw("\n<table class=\"sessions\">\n<thead><tr><th>Started</th><th>Directory</th><th>First prompt</th>" +
			"<th>State</th><th>Updated</th><th>Records</th></tr></thead>\n<tbody>")
		for _, r := range pg.Sessions {
			o.raw("\n<tr")
			if r.Subagent != "" {
				o.raw(" class=\"child\"")
			}
			o.raw(" data-session=\"")
			o.esc(r.ID)
			o.raw("\"><td><a href=\"/s/")
			o.urlPart(r.ID)
			o.raw("\">")
			o.time(r.Start)
			o.raw("</a></td><td class=\"cwd\"><code>")
			o.esc(r.Cwd)
			o.raw("</code></td><td class=\"prompt\"><a href=\"/s/")
			o.urlPart(r.ID)
			o.raw("\">")
			if r.Subagent != "" {
				o.raw("↳ ")
				o.esc(r.Subagent)
				o.raw(": ")
			}
			if r.Prompt != "" {
				o.esc(r.Prompt)
			} else {
				o.raw("(no prompt yet)")
			}
			o.raw("</a></td><td>")
			o.state(r.State)
			if r.State.Error != "" {
				o.raw(" <span class=\"state-error\">")
				o.esc(firstLine(r.State.Error, 120))
				o.raw("</span>")
			}
			o.raw("</td><td>")
			o.time(r.Updated)
			o.raw("</td><td class=\"num\">")
			o.int(int64(r.Records))
			o.raw("</td></tr>")
		}
		o.raw("\n</tbody>\n</table>")
	}
	o.raw("\n</main>\n" + pageEnd)
}

func (o out) session(pg sessionPage) {
	if pg.Export {
		o.exportHead(pg.ID)
		o.raw("<body class=\"session\">\n<header class=\"top\"><h1>")
	} else {
		o.head(pg.ID)
		o.raw("<body class=\"session\">\n<header class=\"top\"><a class=\"back\" href=\"/\">← sessions</a><h1>")
	}
	o.esc(pg.ID)
	o.raw("</h1><p><code class=\"cwd\">")
	o.esc(pg.Cwd)
	o.raw("</code> · started ")
	o.time(pg.Start)
	o.raw(" · ")
	o.int(int64(pg.Calls))
	o.raw(" tool call")
	if pg.Calls != 1 {
		o.raw("s")
	}
	o.usage(pg.Usage)
	o.raw(" ")
	o.state(pg.State)
	if pg.Events != "" {
		// The script says here whether it follows the log.
		o.raw(" <span id=\"conn\" class=\"badge\">not following</span>")
	}
	o.raw("</p>")
	if pg.Resume || pg.Join || pg.Delete {
		o.sessionActions(pg.ID, pg.Resume, pg.Join, pg.Delete)
	}
	if pg.State.Error != "" {
		o.raw("<pre class=\"error state-error\">")
		o.esc(pg.State.Error)
		o.raw("</pre>")
	}
	o.raw("</header>\n<main id=\"log\"")
	if pg.Calls >= 100 {
		o.raw(" class=\"long\"")
	}
	if pg.Events != "" {
		o.raw(" data-events=\"")
		o.esc(pg.Events)
		o.raw("\"")
	}
	o.raw(" data-calls=\"")
	o.int(int64(pg.Calls))
	o.raw("\">\n")
	for it := range pg.Items {
		o.item(it)
		o.raw("\n")
	}
	o.raw("</main>\n")
	if pg.Composer != nil {
		o.composer(*pg.Composer)
	}
	o.raw("<footer id=\"end\"></footer>\n" + pageEnd)
}

func (o out) callPage(pg callPage) {
	o.head(pg.SessionID)
	o.raw("<body class=\"callpage\">\n<header class=\"top\"><a class=\"back\" href=\"/s/")
	o.urlPart(pg.SessionID)
	o.raw("\">← ")
	o.esc(pg.SessionID)
	o.raw("</a></header>\n<main id=\"card\">\n")
	o.item(pg.Item)
	o.raw("\n</main>\n" + pageEnd)
}

// state is a session's state badge; a failed session's error is shown apart.
func (o out) state(st stateView) {
	o.raw("<span class=\"badge state ")
	o.esc(st.Kind)
	o.raw("\">")
	o.esc(st.Kind)
	o.raw("</span>")
}

// time is a <time> element.
func (o out) time(t timeView) {
	o.raw("<time datetime=\"")
	o.esc(t.ISO)
	o.raw("\">")
	o.esc(t.Text)
	o.raw("</time>")
}

// item is one entry of a session page, and an "item" event.
func (o out) item(it *itemView) {
	switch it.Type {
	case "tool":
		o.tool(it.Tool)
	case "turn-end":
		e := it.End
		if e == nil {
			return
		}
		o.raw("<div class=\"item turn-end\" data-item=\"turn-end\" data-stop=\"")
		o.esc(e.Reason)
		// The terminal's words for how the turn ended (termfold.TurnNote).
		o.raw("\"><span>")
		o.esc(termfold.StopWords(e.Reason))
		if e.Usage.InputTokens != 0 || e.Usage.OutputTokens != 0 {
			o.raw(" · ")
			o.tokens(e.Usage)
		}
		if e.Error != "" {
			o.raw(" · <span class=\"error\">")
			o.esc(e.Error)
			o.raw("</span>")
		}
		o.raw("</span>")
		o.raw("</div>")
	case "context":
		o.raw("<section class=\"item msg context")
		o.long(it.Long)
		o.raw("\" data-item=\"context\"><div class=\"who\">")
		o.esc(it.Title)
		o.raw(" ")
		o.time(it.Time)
		o.raw("</div><div class=\"md\">")
		o.raw(string(it.Markdown))
		o.raw("</div>")
		if it.Long {
			o.raw("<details class=\"unclamp\"><summary>Show the whole summary</summary></details>")
		}
		o.raw("</section>")
	case "checkpoint":
		o.raw("<div class=\"item checkpoint\" data-item=\"checkpoint\"><span>")
		o.esc(it.Title)
		o.raw(" · ")
		o.esc(it.Note)
		o.raw("</span></div>")
	case "note":
		o.raw("<div class=\"item note\" data-item=\"note\"><pre class=\"error\">")
		o.esc(it.Note)
		o.raw("</pre></div>")
	case "thinking":
		o.raw("<details class=\"item thinking\" data-item=\"thinking\"><summary>Thinking</summary><div class=\"md\">")
		o.raw(string(it.Markdown))
		o.raw("</div></details>")
	default: // user, assistant
		o.raw("<section class=\"item msg ")
		o.esc(it.Type)
		o.long(it.Long)
		o.raw("\" data-item=\"")
		o.esc(it.Type)
		o.raw("\"><div class=\"who\">")
		if it.Type == "user" {
			o.raw("You ")
		} else {
			o.raw("Assistant ")
		}
		o.time(it.Time)
		o.raw("</div><div class=\"md\">")
		o.raw(string(it.Markdown))
		o.raw("</div>")
		for _, p := range it.Pastes {
			o.raw("<details class=\"paste\"")
			if p.Open {
				o.raw(" open")
			}
			o.raw("><summary>")
			o.esc(p.Chip)
			o.raw("</summary><pre>")
			o.esc(p.Text)
			o.raw("</pre></details>")
		}
		o.contents(it.Images)
		for _, c := range it.Chips {
			o.raw("<p class=\"chip\">")
			o.esc(c)
			o.raw("</p>")
		}
		if it.Long {
			o.raw("<details class=\"unclamp\"><summary>Show the whole message</summary></details>")
		}
		o.raw("</section>")
	}
}

func (o out) long(long bool) {
	if long {
		o.raw(" long")
	}
}

// title is a card's title span.
func (o out) title(t string) {
	o.raw("<span class=\"title\">")
	o.esc(t)
	o.raw("</span>")
}

// cardHead is a card's head holding just its title, if it has one.
func (o out) cardHead(t string) {
	if t != "" {
		o.raw("<div class=\"card-head\">")
		o.title(t)
		o.raw("</div>")
	}
}

func (o out) tool(t *toolView) {
	o.raw("<article class=\"item tool\" id=\"")
	o.esc(t.ElemID)
	o.raw("\" data-item=\"tool\" data-tool=\"")
	o.esc(t.Name)
	o.raw("\" data-state=\"")
	o.esc(t.State)
	o.raw("\">")
	if t.Call != nil {
		o.call(t.Call)
	} else {
		o.raw("<div class=\"card\">")
		o.title(t.Name)
		o.raw("</div>")
	}
	if t.Result != nil {
		o.result(t.Result)
	} else {
		o.raw("<div class=\"live\">")
		if f := t.Progress.Fold; f != nil {
			o.raw("<p class=\"elided\">… ")
			o.int(int64(f.Hidden))
			o.raw(" earlier lines</p>")
		}
		o.raw("<pre class=\"progress\">")
		o.esc(t.Progress.Head)
		o.raw("</pre><span class=\"running\">running…</span></div>")
	}
	o.raw("</article>")
}

func (o out) call(c *callView) {
	switch {
	case c.Generic != nil:
		g := c.Generic
		o.raw("<div class=\"card generic-call\" data-card=\"generic-call\"><div class=\"card-head\">")
		o.title(g.Title)
		if g.ToolKind != "" {
			o.raw(" <span class=\"kind\">")
			o.esc(g.ToolKind)
			o.raw("</span>")
		}
		for _, l := range g.Locations {
			o.raw(" <code class=\"loc\">")
			o.esc(l)
			o.raw("</code>")
		}
		o.raw("</div>")
		o.contents(g.Content)
		if g.Input != "" {
			o.raw("<details class=\"input\"><summary>input</summary><pre>")
			o.esc(g.Input)
			o.raw("</pre></details>")
		}
		o.raw("</div>")
	case c.Terminal != nil:
		t := c.Terminal
		o.raw("<div class=\"card terminal-call\" data-card=\"terminal-call\"><code class=\"cmd\">")
		o.esc(t.Title)
		o.raw("</code>")
		if t.Description != "" {
			o.raw(" <span class=\"desc\">")
			o.esc(t.Description)
			o.raw("</span>")
		}
		if t.Cwd != "" {
			o.raw(" <span class=\"cwd\">in <code>")
			o.esc(t.Cwd)
			o.raw("</code></span>")
		}
		o.raw("</div>")
	case c.Diff != nil:
		d := c.Diff
		o.raw("<div class=\"card diff-call\" data-card=\"diff-call\"><div class=\"card-head\">")
		o.title(d.Title)
		o.raw("</div>")
		if d.Body {
			for i := range d.Files {
				o.diff(&d.Files[i])
			}
		}
		o.raw("</div>")
	case c.Plan != nil:
		o.plan(c.Plan)
	case c.Question != nil:
		o.question(c.Question)
	case c.Task != nil:
		o.taskCall(c.Task)
	}
}

func (o out) plan(p *planView) {
	o.raw("<div class=\"card plan-call\" data-card=\"plan-call\"><div class=\"card-head\">")
	o.title(p.Title)
	o.raw("</div><div class=\"md\">")
	o.raw(string(p.Plan))
	o.raw("</div>")
	if len(p.Files) > 0 {
		o.raw("<p class=\"files\">Files:")
		for _, f := range p.Files {
			o.raw(" <code class=\"loc\">")
			o.esc(f)
			o.raw("</code>")
		}
		o.raw("</p>")
	}
	if len(p.Steps) > 0 {
		o.raw("<ol class=\"steps\">")
		for _, s := range p.Steps {
			o.raw("<li>")
			o.esc(s)
			o.raw("</li>")
		}
		o.raw("</ol>")
	}
	o.raw("</div>")
}

func (o out) question(q *card.QuestionCall) {
	o.raw("<div class=\"card question-call\" data-card=\"question-call\"><div class=\"card-head\">")
	o.title(q.Question)
	o.raw("</div><ol class=\"choices\">")
	for _, c := range q.Choices {
		o.raw("<li>")
		o.esc(c.Label)
		if c.Description != "" {
			o.raw(" <span class=\"desc\">")
			o.esc(c.Description)
			o.raw("</span>")
		}
		o.raw("</li>")
	}
	o.raw("</ol>")
	if q.FreeText {
		o.raw("<p class=\"desc\">or an answer in your own words</p>")
	}
	o.raw("</div>")
}

func (o out) result(r *resultView) {
	switch {
	case r.Generic != nil:
		o.raw("<div class=\"card generic-result\" data-card=\"generic-result\">")
		o.cardHead(r.Generic.Title)
		o.contents(r.Generic.Content)
		o.raw("</div>")
	case r.Terminal != nil:
		o.terminal(r.Terminal)
	case r.Read != nil:
		o.read(r.Read)
	case r.Diff != nil:
		d := r.Diff
		o.raw("<div class=\"card diff-result\" data-card=\"diff-result\">")
		if d.Title != "" || d.Paths > 1 {
			o.raw("<div class=\"card-head\">")
			if d.Title != "" {
				o.title(d.Title)
				o.raw(" ")
			}
			if d.Paths > 1 {
				o.stat(d.Ins, d.Del)
			}
			o.raw("</div>")
		}
		for i := range d.Files {
			o.diff(&d.Files[i])
		}
		o.diagnostics(d.Diagnostics)
		o.raw("</div>")
	case r.Search != nil:
		o.search(r.Search)
	case r.Answer != nil:
		o.raw("<div class=\"card ")
		o.esc(r.Answer.Kind)
		o.raw("\" data-card=\"")
		o.esc(r.Answer.Kind)
		o.raw("\"><p class=\"answer")
		if r.Answer.OK {
			o.raw(" ok")
		}
		o.raw("\">→ ")
		o.esc(r.Answer.Outcome)
		o.raw("</p></div>")
	case r.Task != nil:
		o.taskResult(r.Task)
	case r.Raw != nil:
		o.raw("<div class=\"card raw-result")
		if r.Raw.IsError {
			o.raw(" error")
		}
		o.raw("\" data-card=\"raw-result\">")
		o.contents(r.Raw.Content)
		o.raw("</div>")
	}
}

func (o out) terminal(t *terminalView) {
	o.raw("<div class=\"card terminal-result\" data-card=\"terminal-result\">")
	o.cardHead(t.Title)
	if t.Output.Head != "" || t.Output.Fold != nil {
		o.text(t.Output)
	} else {
		o.raw("<p class=\"none\">no output</p>")
	}
	o.raw("<div class=\"status\"><span class=\"badge ")
	if t.OK {
		o.raw("ok")
	} else {
		o.raw("fail")
	}
	o.raw("\">")
	o.esc(t.Status)
	o.raw("</span>")
	if t.TimedOut {
		o.raw(" <span class=\"badge timeout\">timed out</span>")
	}
	if sb := t.Sandbox; sb != nil {
		o.raw(" <span class=\"badge sandbox\">sandboxed")
		if !sb.Network {
			o.raw(", network off")
		}
		o.raw("</span>")
	}
	o.raw("</div>")
	if sb := t.Sandbox; sb != nil && sb.Refused != "" {
		o.raw("<p class=\"refused\">Refused by the sandbox: <code>")
		o.esc(sb.Refused)
		o.raw("</code></p>")
	}
	o.raw("</div>")
}

func (o out) read(r *readView) {
	o.raw("<div class=\"card read-result\" data-card=\"read-result\"><div class=\"card-head\">")
	if r.Title != "" {
		o.title(r.Title)
		o.raw(" ")
	}
	o.raw("<code class=\"path\">")
	o.esc(r.Path)
	o.raw("</code> <span class=\"range\">")
	o.esc(r.Range)
	o.raw("</span>")
	if r.Lang != "" {
		o.raw(" <span class=\"lang\">")
		o.esc(r.Lang)
		o.raw("</span>")
	}
	o.raw("</div><div class=\"code\">")
	o.raw(string(r.Code.Head))
	if r.Code.Fold != nil {
		o.fold(r.Code.Fold)
	}
	o.raw("</div></div>")
}

func (o out) search(s *searchView) {
	o.raw("<div class=\"card search-result\" data-card=\"search-result\"><div class=\"card-head\">")
	if s.Title != "" {
		o.title(s.Title)
		o.raw(" ")
	}
	o.raw("<code class=\"query\">")
	o.esc(s.Query)
	o.raw("</code></div>")
	for _, f := range s.Files {
		o.raw("<div class=\"sfile\"><code class=\"path\">")
		o.esc(f.Path)
		o.raw("</code>")
		if len(f.Lines) == 0 {
			o.raw(" <span class=\"count\">")
			o.int(int64(f.Count))
			o.raw(" matching line")
			if f.Count != 1 {
				o.raw("s")
			}
			o.raw("</span>")
		} else {
			o.raw("<table class=\"matches\"><tbody>")
			for _, l := range f.Lines {
				if l.Gap {
					o.raw("<tr class=\"gap\"><td colspan=\"2\">⋯</td></tr>")
				}
				o.raw("<tr id=\"")
				o.esc(l.ID)
				if l.Match {
					o.raw("\" class=\"m\"><td class=\"n\"><a href=\"")
				} else {
					o.raw("\" class=\"ctx\"><td class=\"n\"><a href=\"")
				}
				o.url(l.Href)
				o.raw("\">")
				o.int(int64(l.Line))
				o.raw("</a></td><td class=\"t\">")
				for _, p := range l.Parts {
					if p.Hit {
						o.raw("<mark>")
						o.esc(p.Text)
						o.raw("</mark>")
					} else {
						o.esc(p.Text)
					}
				}
				o.raw("</td></tr>")
			}
			o.raw("</tbody></table>")
		}
		o.raw("</div>")
	}
	if len(s.Paths) > 0 {
		o.raw("<ul class=\"paths\">")
		for _, p := range s.Paths {
			o.raw("<li><code>")
			o.esc(p)
			o.raw("</code></li>")
		}
		o.raw("</ul>")
	}
	if s.More != "" {
		o.raw("<p class=\"none\">")
		o.esc(s.More)
		o.raw("</p>")
	}
	o.raw("</div>")
}

// stat is a change's counts of inserted and deleted lines.
func (o out) stat(ins, del int) {
	o.raw("<span class=\"stat\"><span class=\"ins\">+")
	o.int(int64(ins))
	o.raw("</span> <span class=\"del\">−")
	o.int(int64(del))
	o.raw("</span></span>")
}

func (o out) diff(d *diffView) {
	o.raw("<div class=\"diff\">")
	if d.ShowPath {
		o.raw("<div class=\"file\"><code class=\"path\">")
		o.esc(d.Path)
		o.raw("</code>")
		if d.New {
			o.raw(" <span class=\"badge new\">new file</span>")
		}
		o.raw(" ")
		o.stat(d.FileIns, d.FileDel)
		o.raw("</div>")
	}
	if d.Header != "" {
		o.raw("<div class=\"hunk-head\">")
		o.esc(d.Header)
		o.raw("</div>")
	}
	o.raw("<table class=\"hunk")
	if d.Numbered {
		o.raw(" numbered")
	}
	o.raw("\"><tbody>")
	for _, r := range d.Head {
		o.row(r)
	}
	if d.Fold != nil {
		o.raw("<tr class=\"fold\"><td colspan=\"4\">")
		o.fold(d.Fold)
		o.raw("</td></tr>")
	}
	for _, r := range d.Tail {
		o.row(r)
	}
	o.raw("</tbody></table></div>")
}

func (o out) row(r diffRow) {
	o.raw("<tr class=\"")
	o.esc(r.Op)
	o.raw("\"><td class=\"n\">")
	o.esc(r.Old)
	o.raw("</td><td class=\"n\">")
	o.esc(r.New)
	o.raw("</td><td class=\"s\">")
	o.esc(r.Sign)
	o.raw("</td><td class=\"t\">")
	o.esc(r.Text)
	o.raw("</td></tr>")
}

func (o out) text(t textBody) {
	o.raw("<div class=\"text\"><pre>")
	o.esc(t.Head)
	o.raw("</pre>")
	if t.Fold != nil {
		o.fold(t.Fold)
	}
	if t.Tail != "" {
		o.raw("<pre>")
		o.esc(t.Tail)
		o.raw("</pre>")
	}
	o.raw("</div>")
}

// fold is the control standing for the lines a folded body does not show.
func (o out) fold(f *foldView) {
	o.raw("<details class=\"more\"")
	if f.Src != "" {
		o.raw(" data-src=\"")
		o.url(f.Src)
		o.raw("\"")
	}
	o.raw("><summary>")
	if f.Hidden != 0 {
		o.int(int64(f.Hidden))
		o.raw(" more lines")
		if f.Clipped {
			o.raw(", long lines cut")
		}
	} else {
		o.raw("long lines cut")
	}
	o.raw("</summary>")
	if f.Src != "" {
		o.raw("<a href=\"")
		o.url(f.Src)
		o.raw("\">show the whole card</a>")
	} else {
		o.raw("<span>the whole text is in the session log</span>")
	}
	o.raw("</details>")
}

func (o out) contents(cs []contentView) {
	for _, c := range cs {
		if c.Image == "" {
			o.text(c.Text)
			continue
		}
		o.raw("<img class=\"image\" alt=\"image (")
		o.esc(c.Mime)
		o.raw(")\" src=\"")
		// A data: URL, which url would refuse: contents let it through only
		// for a raster image type with well-formed base64.
		o.urlPart(c.Image)
		o.raw("\">")
	}
}

// usage is the session's totals, an element the stream replaces by its id. It
// is empty while no model reported tokens (some never do): no "0 tokens".
func (o out) usage(u usageView) {
	o.raw("<span id=\"")
	o.esc(u.ID)
	o.raw("\" class=\"usage\">")
	if u.InputTokens != 0 || u.OutputTokens != 0 {
		o.raw(" · ")
		o.tokens(u)
	}
	o.raw("</span>")
}

func (o out) tokens(u usageView) {
	o.int(u.InputTokens)
	o.raw(" tokens in, ")
	o.int(u.OutputTokens)
	o.raw(" out")
	switch {
	case u.Unpriced && u.Cost != 0:
		o.raw(" · $")
		o.cost(u.Cost)
		o.raw(" for the calls whose price is known")
	case u.Unpriced:
		o.raw(" · price not known")
	default:
		o.raw(" · $")
		o.cost(u.Cost)
	}
}

func (o out) cost(c float64) { o.esc(strconv.FormatFloat(c, 'f', 4, 64)) }

// chunk is a "progress" event: output of the running call data-call names.
func (o out) chunk(c chunkView) {
	o.raw("<pre data-call=\"")
	o.esc(c.ElemID)
	o.raw("\">")
	o.esc(c.Text)
	o.raw("</pre>")
}
