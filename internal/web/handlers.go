package web

import (
	"bufio"
	"bytes"
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/dsh-dev/dsh/internal/session"
)

// sessionPath turns the {id} of a request into the path of its log. The id must
// look like a session id ([a-z0-9-], no leading '-'), so it can never name a path:
// session.Resolve would accept one, and a request is untrusted.
func (s *Server) sessionPath(r *http.Request) (id, path string, ok bool) {
	id = r.PathValue("id")
	if !session.ValidID(id) {
		return "", "", false
	}
	p, err := session.Resolve(s.o.Dir, id)
	if err != nil || filepath.Dir(p) != filepath.Clean(s.o.Dir) {
		return "", "", false
	}
	return strings.TrimSuffix(filepath.Base(p), ".jsonl"), p, true
}

// sessionRecords reads the session the request names (its id, path and
// records), or answers the request
// with the error (404 for an unknown or invalid id) and returns false.
func (s *Server) sessionRecords(w http.ResponseWriter, r *http.Request) (string, string, []session.Record, bool) {
	id, path, ok := s.sessionPath(r)
	if !ok {
		http.NotFound(w, r)
		return "", "", nil, false
	}
	// Lenient: one damaged line shows as such, and the page (and its live stream,
	// which counts lines the same way) goes on after it.
	recs, err := session.ReadLenient(path)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return "", "", nil, false
	}
	return id, path, recs, true
}

func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	infos, err := session.List(s.o.Dir)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	pg := listPage{Dir: s.o.Dir, Roots: s.roots, Drive: s.o.Open != nil}
	// A subagent's session goes under its parent's, as dsh sessions marks it;
	// one whose parent is not listed stands alone.
	listed := map[string]bool{}
	for _, in := range infos {
		listed[in.ID] = true
	}
	children := map[string][]session.Info{}
	for _, in := range infos {
		if in.Parent != nil && listed[in.Parent.Session] {
			children[in.Parent.Session] = append(children[in.Parent.Session], in)
		}
	}
	added := map[string]bool{}
	var add func(in session.Info, child bool)
	add = func(in session.Info, child bool) {
		if added[in.ID] {
			return
		}
		added[in.ID] = true
		// A log whose end cannot be read shows as finished, as it did before.
		tail, _ := endRecords(in.Path)
		row := listRow{
			ID: in.ID, Cwd: in.Cwd, Prompt: firstLine(in.Name(), 200),
			Start: s.timeView(in.Start), Updated: s.timeView(in.Updated), State: sessionState(tail, in.Live), Records: in.Records,
		}
		if child {
			row.Subagent = in.Parent.Agent
			if row.Subagent == "" {
				row.Subagent = "subagent"
			}
		}
		pg.Sessions = append(pg.Sessions, row)
		for _, c := range children[in.ID] {
			add(c, true)
		}
	}
	for _, in := range infos {
		if in.Parent == nil || !listed[in.Parent.Session] {
			add(in, false)
		}
	}
	for _, in := range infos { // parents that name each other: listed all the same
		add(in, false)
	}
	s.render(w, func(o out) { o.list(pg) })
}

func (s *Server) handleSession(w http.ResponseWriter, r *http.Request) {
	id, path, recs, ok := s.sessionRecords(w, r)
	if !ok {
		return
	}
	// Live is read after the records: a writer that closes in between leaves a
	// page that follows a log no longer growing, not a finished page that misses
	// the records written after it was read.
	live := session.Live(path)
	pg := s.sessionPage(id, recs, live)
	if d := s.driven.get(id); d != nil {
		pg.Composer = &composerView{ID: id, Status: d.live.Session.Status(), Models: d.live.Session.Models()}
	} else {
		pg.Resume = s.o.Open != nil && !live
		pg.Join = s.o.Join != nil && live
		pg.Delete = s.o.Open != nil && !live
	}
	s.stream(w, func(o out) { o.session(pg) })
}

// handleCall serves one tool call's card unfolded: what a folded body's expand
// control loads (the script swaps it in; without script it is a page of its own).
func (s *Server) handleCall(w http.ResponseWriter, r *http.Request) {
	id, _, recs, ok := s.sessionRecords(w, r)
	if !ok {
		return
	}
	callID := r.PathValue("call")
	var mine []session.Record // the call and its result
	var progress []string
	for _, rec := range recs {
		if rec.CallID != callID {
			continue
		}
		switch rec.Type {
		case session.TypeToolCall:
			mine, progress = []session.Record{rec}, nil
		case session.TypeToolResult:
			if len(mine) == 1 {
				mine = append(mine, rec)
			}
		case session.TypeProgress:
			progress = append(progress, rec.Chunk)
		case session.TypeHeader, session.TypeUser, session.TypeAssistant, session.TypeThinking,
			session.TypePlan, session.TypeTurnEnd, session.TypeMode, session.TypeAllow, session.TypeDamaged, session.TypeCompaction, session.TypeInstructions, session.TypeModel, session.TypeCheckpoint, session.TypeRestore, session.TypeHook, session.TypeCommand, session.TypeReply, session.TypeDecision, session.TypeTitle:
		}
	}
	if len(mine) == 0 {
		http.NotFound(w, r)
		return
	}
	b := s.newBuilder(id, true)
	call := b.present(mine...)
	if call.Tool.Result == nil {
		call.Tool.Progress = b.progressBody(strings.Join(progress, ""))
	}
	s.render(w, func(o out) { o.callPage(callPage{SessionID: id, Item: call}) })
}

func (s *Server) handleStatic(w http.ResponseWriter, r *http.Request) {
	a, ok := assets()[r.PathValue("file")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", a.mime)
	_, _ = w.Write(a.body)
}

// render renders a page into a buffer first, so that it is sent with its length.
func (s *Server) render(w http.ResponseWriter, page func(out)) {
	var b bytes.Buffer
	page(out{&b})
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	_, _ = w.Write(b.Bytes())
}

// stream renders a page straight to the client: a long session's page starts to
// arrive, and the browser to parse it, while the rest is rendered. A client gone
// halfway cuts the page short; the writer's error is sticky, so Flush reports it.
func (s *Server) stream(w http.ResponseWriter, page func(out)) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	bw := bufio.NewWriterSize(w, 64<<10)
	page(out{bw})
	if err := bw.Flush(); err != nil {
		slog.Error("web: render", "err", err)
	}
}

//go:embed static
var staticFS embed.FS

// asset is an embedded static file.
type asset struct {
	mime string
	body []byte
}

// assets are the files under /static/: the embedded script and styles and the
// syntax-highlighting classes. Like every costly value of this package, they are
// made on first use, not at every dsh start-up.
var assets = sync.OnceValue(func() map[string]asset {
	m := map[string]asset{}
	for name, mime := range map[string]string{
		"app.js":    "text/javascript; charset=utf-8",
		"style.css": "text/css; charset=utf-8",
	} {
		b, err := fs.ReadFile(staticFS, "static/"+name)
		if err != nil {
			panic(err) // embedded: cannot happen in a built binary
		}
		m[name] = asset{mime, b}
	}
	m["chroma.css"] = asset{"text/css; charset=utf-8", chromaCSS()}
	return m
})
