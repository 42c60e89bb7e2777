package web

import (
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"iter"
	"log/slog"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/dsh-dev/dsh/internal/attach"
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/session/usage"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/view"
)

// listPage is the session list.
type listPage struct {
	Dir      string
	Sessions []listRow
	// Drive says the page may start sessions, in Roots.
	Drive bool
	Roots []string
}

type listRow struct {
	ID, Cwd, Prompt string
	Subagent        string // a child session's agent: the row goes under its parent's
	Start, Updated  timeView
	State           stateView
	Records         int
}

// timeView is a time as the page shows it.
type timeView struct{ ISO, Text string }

// sessionPage is one session.
type sessionPage struct {
	ID, Cwd string
	Start   timeView
	// Items yields the items in order as they are built, so that the page can be
	// sent while the rest is still being rendered.
	Items iter.Seq[*itemView]
	Calls int
	// Usage is the session's tokens and cost, from the fold the host uses.
	Usage usageView
	State stateView
	// Events is the URL of the session's event stream, which starts right after
	// the records this page holds; empty when the log is not live, as nothing
	// more will come.
	Events string
	// Export is a page written to a file (dsh export): styles inline, no
	// script, no link to a server.
	Export bool
	// Composer is set when this server drives the session: the page sends
	// prompts and answers. Otherwise Resume and Join offer to drive it (a
	// finished session, one live in another process) and Delete to delete it.
	Composer             *composerView
	Resume, Join, Delete bool
}

// callPage is one tool call, unfolded.
type callPage struct {
	SessionID string
	Item      *itemView
}

// itemView is one entry of a session page: a message, a tool call, the end of
// a turn or a note. Type is its data-item attribute.
type itemView struct {
	Type     string
	Time     timeView
	Markdown safeHTML      // user, assistant, thinking
	Chips    []string      // user: the files attached, as attach.View shows them
	Pastes   []pasteView   // user: the text pasted, whole
	Images   []contentView // user: the images attached, vetted
	Long     bool          // a long message, shown clamped
	End      *endView
	Tool     *toolView
	Note     string // a record that could not be shown; a checkpoint's state
	Title    string // a context item's or a checkpoint's title
}

// pasteView is a paste of a user message: its chip (what stands for it in the
// text) over its text, open when short.
type pasteView struct {
	Chip, Text string
	Open       bool
}

type endView struct {
	Reason, Error string
	Usage         usageView // what the turn spent
}

// usageView is tokens and cost as the page shows them; ID is set on the
// session's totals, which the stream replaces as they change.
type usageView struct {
	ID string
	usage.Totals
}

// builder turns a session's records into items. full renders every body whole
// (the unfolded card); otherwise long bodies are folded to keep the page light.
// Its methods only read it, so items can be built concurrently.
type builder struct {
	s    *Server
	sid  string
	full bool
}

func (s *Server) newBuilder(sid string, full bool) *builder {
	return &builder{s: s, sid: sid, full: full}
}

// job is what one item of a page is built from: a record, or a call and its
// result, or a running call and its output so far.
type job struct {
	recs     []session.Record
	progress *strings.Builder
	turn     usage.Totals // a turn_end's
}

// sessionPage lays out recs as they would look had the page followed the log from
// its start: a call is shown where it was made, with its result once it has one
// and the output so far while it runs; usage is folded on the way, as the stream
// folds it. The layout is one cheap pass; the items,
// where the presenters and highlighting spend the time, are built in parallel
// (every one of them, even if nobody reads them all) and yielded in order.
func (s *Server) sessionPage(sid string, recs []session.Record, live bool) sessionPage {
	return s.layout(s.newBuilder(sid, false), recs, live)
}

func (s *Server) layout(b *builder, recs []session.Record, live bool) sessionPage {
	sid := b.sid
	pg := sessionPage{ID: sid, State: sessionState(recs, live)}
	if live {
		pg.Events = "/s/" + sid + "/events?from=" + strconv.Itoa(len(recs))
	}
	var jobs []job
	at := map[string]int{} // call id → its job, while it has no result
	var fold usage.Fold
	for _, r := range recs {
		fold.Record(r)
		switch r.Type {
		case session.TypeHeader:
			pg.Cwd, pg.Start = r.Cwd, s.timeView(r.Time)
			continue
		case session.TypeProgress:
			if i, ok := at[r.CallID]; ok {
				jobs[i].progress.WriteString(r.Chunk)
			}
			continue
		case session.TypeToolCall:
			pg.Calls++
			at[r.CallID] = len(jobs)
			jobs = append(jobs, job{recs: []session.Record{r}, progress: &strings.Builder{}})
			continue
		case session.TypeToolResult:
			if i, ok := at[r.CallID]; ok {
				jobs[i] = job{recs: append(jobs[i].recs, r)}
				delete(at, r.CallID)
				continue
			}
		case session.TypeTurnEnd:
			jobs = append(jobs, job{recs: []session.Record{r}, turn: fold.LastTurn()})
			continue
		case session.TypeUser, session.TypeAssistant, session.TypeThinking, session.TypePlan,
			session.TypeDamaged, session.TypeCompaction, session.TypeInstructions, session.TypeModel,
			session.TypeMode, session.TypeAllow, session.TypeCheckpoint, session.TypeRestore, session.TypeHook, session.TypeCommand, session.TypeReply,
			session.TypeDecision, session.TypeTitle:
			// b.item decides what shows, for the page and the stream alike.
		}
		jobs = append(jobs, job{recs: []session.Record{r}})
	}
	pg.Usage = totalsView(fold.Total())
	items := make([]*itemView, len(jobs))
	done := make([]chan struct{}, len(jobs))
	for i := range done {
		done[i] = make(chan struct{})
	}
	var next atomic.Int64
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		go func() {
			for i := int(next.Add(1) - 1); i < len(jobs); i = int(next.Add(1) - 1) {
				items[i] = b.build(jobs[i])
				close(done[i])
			}
		}()
	}
	pg.Items = func(yield func(*itemView) bool) {
		for i := range items {
			<-done[i]
			if items[i] == nil {
				continue
			}
			if !yield(items[i]) {
				return
			}
		}
	}
	return pg
}

// build builds a job's item. A panic (a presenter's bug) would take the server
// down from this goroutine, where net/http cannot recover it: it becomes a note.
func (b *builder) build(j job) (it *itemView) {
	defer func() {
		if p := recover(); p != nil {
			slog.Error("web: render", "session", b.sid, "panic", p)
			it = &itemView{Type: "note", Note: fmt.Sprintf("this record could not be shown: %v", p)}
		}
	}()
	it = b.present(j.recs...)
	if it != nil && j.progress != nil && it.Tool != nil {
		it.Tool.Progress = b.progressBody(j.progress.String())
	}
	if it != nil && it.End != nil {
		it.End.Usage.Totals = j.turn
	}
	return it
}

// present presents recs in order (a call before its result) and builds the item
// of the last one.
func (b *builder) present(recs ...session.Record) *itemView {
	p := newPresenter(b.s.o.Registry, b.sid)
	var it view.Item
	name := ""
	for _, r := range recs {
		it = p.Present(r)
		if r.Type == session.TypeToolCall {
			name = r.Name
		}
	}
	return b.item(it, name)
}

// item renders one presented record; name is the tool of a call or result. It is
// nil for records that show nothing by themselves (the header, progress). A
// turn_end's usage is the fold's, which its caller fills in.
func (b *builder) item(it view.Item, name string) *itemView {
	r := it.Record
	v := &itemView{Type: string(r.Type), Time: b.s.timeView(r.Time)}
	switch r.Type {
	case session.TypeUser:
		text, chips := attach.View(r.Text, r.Content)
		v.Markdown, v.Chips = markdown(text), chips
		v.Long = !b.full && strings.Count(text, "\n") >= msgClampLines
		// Pastes whole, where the text has their chips; images drawn. The
		// attached files are chips (attach.View).
		for _, c := range r.Content {
			if c.Type == card.ContentPaste {
				v.Pastes = append(v.Pastes, pasteView{Chip: attach.PasteChip(c.Text), Text: c.Text,
					Open: b.full || strings.Count(c.Text, "\n") < msgClampLines})
			}
		}
		for _, c := range attach.Images(r.Content) {
			if u, ok := imageURL(c); ok {
				v.Images = append(v.Images, contentView{Mime: c.MimeType, Image: u})
			} else {
				v.Chips = append(v.Chips, attach.ImageChips([]card.Content{c})...)
			}
		}
	case session.TypeAssistant, session.TypeThinking:
		v.Markdown = markdown(r.Text)
		v.Long = !b.full && strings.Count(r.Text, "\n") >= msgClampLines
	case session.TypeTurnEnd:
		v.Type = "turn-end"
		v.End = &endView{Reason: r.StopReason, Error: r.Error}
	case session.TypeToolCall, session.TypeToolResult:
		v.Type = "tool"
		v.Tool = b.tool(it, name)
	case session.TypeDamaged:
		v.Type = "note"
		v.Note = "a damaged line of the log could not be shown: " + r.Error
	case session.TypeCompaction, session.TypeInstructions:
		// What dsh added to the model's context, where it happened: the card's
		// title over its text.
		v.Type = "context"
		if c, ok := it.Call.(*card.GenericCall); ok {
			v.Title = c.Title
		}
		v.Markdown = markdown(r.Text)
		v.Long = !b.full && strings.Count(r.Text, "\n") >= msgClampLines
	case session.TypeRestore:
		// An undo is drawn as the call it stands in for: its diff.
		v.Type = "tool"
		v.Tool = b.diffTool(fmt.Sprintf("restore-%d", r.Restore.To), it)
	case session.TypeHook:
		// A hook's run is a small finished call of its own, where it ran.
		if it.Call == nil {
			return nil
		}
		v.Type = "tool"
		v.Tool = &toolView{ElemID: hookElemID(r), Name: it.Name, State: "done",
			Call: b.callCard("", it.Call), Result: b.resultCard("", it.Result)}
		v.Tool.Result.dropTitle(v.Tool.Call)
	case session.TypeCommand:
		// A built-in command as typed, as the user's message.
		v.Type = string(session.TypeUser)
		v.Markdown = markdown("`" + strings.ReplaceAll(r.Text, "`", "'") + "`")
	case session.TypeReply:
		// Its answer: dsh's, not the model's; /diff's, the change it shows;
		// a sign-in's, its card.
		if it.Call != nil {
			v.Type = "tool"
			v.Tool = b.diffTool(it.Name+"-"+strconv.FormatInt(r.Time.UnixNano(), 10), it)
			break
		}
		v.Type = "note"
		v.Note = r.Text
	case session.TypeCheckpoint:
		// The timeline marks where each prompt can be rewound to.
		c := r.Checkpoint
		if c.Phase != session.PhaseBefore {
			return nil
		}
		v.Type = "checkpoint"
		v.Title = fmt.Sprintf("Checkpoint %d", c.Prompt)
		v.Note = "/rewind goes back here"
		if c.Tree == "" && c.Note != session.CheckpointPending {
			v.Note = "no snapshot: " + c.Note
		}
	case session.TypeModel:
		// A model dsh changed to on its own (a fallback) says why; the user's
		// own change shows in the header.
		if r.Text == "" {
			return nil
		}
		v.Type = "note"
		v.Note = r.Text
	case session.TypeTitle:
		v.Type = "note"
		v.Note = "renamed: " + r.Text
	case session.TypeDecision:
		// Who answered, as the terminal says it: a page that watches a chat
		// shows that the web page, or a second chat, decided.
		if r.From == "" {
			return nil
		}
		v.Type = "note"
		v.Note = view.DecisionNote(r)
	case session.TypeHeader, session.TypeProgress, session.TypeMode, session.TypeAllow,
		session.TypePlan: // the todo_write card right before it shows the plan, as in the terminal
		return nil
	}
	return v
}

// totalsView is the session's totals, as the header shows them.
func totalsView(t usage.Totals) usageView { return usageView{ID: "usage", Totals: t} }

// msgClampLines is how many lines a message has before it is shown clamped.
const msgClampLines = 40

// hookElemID is the element id of a hook's run, which the live page appends
// (an element with the same id would be replaced): by its event, its command
// (the hooks of one event are told apart by it) and the call it ran for, else
// its time (a prompt's).
func hookElemID(r session.Record) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(r.Hook.Command))
	id := fmt.Sprintf("hook-%s-%08x-", r.Hook.Event, h.Sum32())
	if r.Hook.Call != "" {
		return id + callElemID(r.Hook.Call)
	}
	return id + strconv.FormatInt(r.Time.UnixNano(), 10)
}

// callElemID is the element id of a call's article. Call ids come from the model,
// so anything beyond a plain token is hex-encoded.
func callElemID(callID string) string {
	for _, c := range []byte(callID) {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '-' && c != '_' {
			return "c-x" + hex.EncodeToString([]byte(callID))
		}
	}
	return "c-" + callID
}

// callURL is where the unfolded card of a call is served.
func (b *builder) callURL(callID string) string {
	return "/s/" + b.sid + "/call/" + url.PathEscape(callID)
}

func (s *Server) timeView(t time.Time) timeView {
	if t.IsZero() {
		return timeView{}
	}
	return timeView{ISO: t.UTC().Format(time.RFC3339), Text: t.In(s.o.Location).Format("2006-01-02 15:04:05")}
}

// firstLine returns the first non-blank line of s, cut to n runes.
func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i]) + " …"
	}
	return clip(s, n)
}

// clip cuts s to at most n runes, marking the cut with an ellipsis.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i, count := 0, 0
	for i < len(s) && count < n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	if i >= len(s) {
		return s
	}
	return s[:i] + "…"
}

// newPresenter presents a session's records; a presenter that fails is logged.
func newPresenter(reg *tool.Registry, sid string) *view.Presenter {
	p := view.NewPresenter(reg)
	p.OnError = func(err error) { slog.Error("web: present", "session", sid, "err", err) }
	return p
}

// diffTool draws a change that is not a call (an undo, /diff) as a finished
// call: as for an edit, the result holds the diff, the call its title.
func (b *builder) diffTool(id string, it view.Item) *toolView {
	t := &toolView{ElemID: id, Name: it.Name, State: "done",
		Call: b.callCard("", it.Call), Result: b.resultCard("", it.Result)}
	t.Result.dropTitle(t.Call)
	if t.Call.Diff != nil {
		t.Call.Diff.Body = false
	}
	return t
}
