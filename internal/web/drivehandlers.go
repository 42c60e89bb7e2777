package web

import (
	"encoding/base64"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/session"
)

// The routes that drive sessions. Every one is a POST, which ServeHTTP lets
// through only with the token's cookie and from the page's own origin.

// defaultMaxBody bounds a request's body: a prompt with a few images.
const defaultMaxBody = 32 << 20

// readJSON decodes the request's body into v, or answers the request with why
// it cannot (413 for a body over the bound) and returns false.
func (s *Server) readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	err := json.UnmarshalRead(http.MaxBytesReader(w, r.Body, s.o.MaxBody), v)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		http.Error(w, "413 the request is too large (at most "+sizeText(s.o.MaxBody)+")", http.StatusRequestEntityTooLarge)
		return false
	case err != nil:
		http.Error(w, "400 bad request: "+err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func sizeText(n int64) string {
	if n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.MarshalWrite(w, v)
}

// notDriving answers a drive request to a server that only watches.
func (s *Server) notDriving(w http.ResponseWriter) bool {
	if s.o.Open == nil {
		http.Error(w, "404 this server only shows sessions", http.StatusNotFound)
		return true
	}
	return false
}

// inRoots resolves dir and reports whether it is one of the server's roots
// or inside one: the page starts sessions nowhere else.
func (s *Server) inRoots(dir string) (string, bool) {
	if !filepath.IsAbs(dir) {
		return "", false
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(dir))
	if err != nil {
		return "", false
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return "", false
	}
	for _, root := range s.roots {
		if rel, err := filepath.Rel(root, real); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return real, true
		}
	}
	return "", false
}

// newRequest is the body of POST /new.
type newRequest struct {
	Dir   string `json:"dir"`
	Trust *bool  `json:"trust"`
}

// opened is the answer to a request that opened a session: its page.
type opened struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

// trustAsk is the answer when the folder's trust is to be asked first.
type trustAsk struct {
	Trust struct {
		Dir     string   `json:"dir"`
		What    string   `json:"what"`
		Ignored []string `json:"ignored"`
	} `json:"trust"`
}

func (s *Server) handleNew(w http.ResponseWriter, r *http.Request) {
	if s.notDriving(w) {
		return
	}
	var req newRequest
	if !s.readJSON(w, r, &req) {
		return
	}
	s.open(w, r, OpenRequest{Dir: req.Dir, Trust: req.Trust})
}

// handleResume reopens a finished session to go on with it here, in the
// directory it ran in.
func (s *Server) handleResume(w http.ResponseWriter, r *http.Request) {
	if s.notDriving(w) {
		return
	}
	var req newRequest
	if !s.readJSON(w, r, &req) {
		return
	}
	id, path, ok := s.sessionPath(r)
	if !ok {
		http.NotFound(w, r)
		return
	}
	var cwd string
	errFound := errors.New("found")
	err := session.Scan(path, func(rec session.Record) error {
		cwd = rec.Cwd // the header comes first
		return errFound
	})
	if err != nil && !errors.Is(err, errFound) {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	s.open(w, r, OpenRequest{Dir: cwd, Resume: id, Trust: req.Trust})
}

func (s *Server) open(w http.ResponseWriter, r *http.Request, req OpenRequest) {
	dir, ok := s.inRoots(req.Dir)
	if !ok {
		http.Error(w, "403 "+req.Dir+" is not a directory inside those dsh web was started for ("+
			strings.Join(s.roots, ", ")+")", http.StatusForbidden)
		return
	}
	req.Dir = dir
	if req.Resume != "" {
		if d := s.driven.get(req.Resume); d != nil { // already driven here
			writeJSON(w, http.StatusOK, opened{ID: d.id, URL: "/s/" + d.id})
			return
		}
	}
	l, err := s.o.Open(r.Context(), req)
	var te *TrustError
	if errors.As(err, &te) {
		var a trustAsk
		a.Trust.Dir, a.Trust.What, a.Trust.Ignored = te.Dir, te.What, te.Ignored
		writeJSON(w, http.StatusConflict, a)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	d := s.start(l)
	writeJSON(w, http.StatusOK, opened{ID: d.id, URL: "/s/" + d.id})
}

// handleJoin joins a session live in another dsh process, through its
// control endpoint.
func (s *Server) handleJoin(w http.ResponseWriter, r *http.Request) {
	id, _, ok := s.sessionPath(r)
	if !ok || s.o.Join == nil {
		http.NotFound(w, r)
		return
	}
	if d := s.driven.get(id); d != nil {
		writeJSON(w, http.StatusOK, opened{ID: id, URL: "/s/" + id})
		return
	}
	l, err := s.o.Join(r.Context(), id)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	s.start(l)
	writeJSON(w, http.StatusOK, opened{ID: id, URL: "/s/" + id})
}

// driverOf is the driver of the session the request names, or the request is
// answered with 404.
func (s *Server) driverOf(w http.ResponseWriter, r *http.Request) *driver {
	id, _, ok := s.sessionPath(r)
	var d *driver
	if ok {
		d = s.driven.get(id)
	}
	if d == nil {
		http.Error(w, "404 this session is not driven from this page (continue or join it first)", http.StatusNotFound)
	}
	return d
}

// inputRequest is the body of POST /s/{id}/input: the text as typed and the
// files attached from the browser.
type inputRequest struct {
	Text  string       `json:"text"`
	Files []uploadFile `json:"files"`
}

type uploadFile struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Data string `json:"data"` // base64
}

// imageTypes are the images a prompt may carry (the providers' own list).
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// content turns the files attached in the browser into what the host takes:
// images as images, text files as attached resources.
func (f uploadFile) content() (card.Content, error) {
	b, err := base64.StdEncoding.DecodeString(f.Data)
	if err != nil {
		return card.Content{}, errors.New(f.Name + ": not base64")
	}
	if imageTypes[f.Type] {
		return card.Image(f.Type, f.Data), nil
	}
	if !utf8.Valid(b) || strings.IndexByte(string(b), 0) >= 0 {
		return card.Content{}, errors.New(f.Name + ": only text files and images (PNG, JPEG, GIF, WebP) can be attached")
	}
	return card.Resource(filepath.Base(f.Name), string(b)), nil
}

func (s *Server) handleInput(w http.ResponseWriter, r *http.Request) {
	d := s.driverOf(w, r)
	if d == nil {
		return
	}
	var req inputRequest
	if !s.readJSON(w, r, &req) {
		return
	}
	in := host.Input{Text: req.Text, Where: host.Editor}
	for _, f := range req.Files {
		c, err := f.content()
		if err != nil {
			http.Error(w, "400 "+err.Error(), http.StatusBadRequest)
			return
		}
		in.Content = append(in.Content, c)
	}
	if strings.TrimSpace(in.Text) == "" && len(in.Content) == 0 {
		http.Error(w, "400 nothing to send", http.StatusBadRequest)
		return
	}
	d.submit(in)
	w.WriteHeader(http.StatusAccepted)
}

func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request) {
	if d := s.driverOf(w, r); d != nil {
		d.live.Session.Cancel()
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *Server) handleAnswer(w http.ResponseWriter, r *http.Request) {
	d := s.driverOf(w, r)
	if d == nil {
		return
	}
	var req answerRequest
	if !s.readJSON(w, r, &req) {
		return
	}
	ok, err := d.answer(r.PathValue("key"), req)
	switch {
	case err != nil:
		http.Error(w, "400 "+err.Error(), http.StatusBadRequest)
	case !ok:
		http.Error(w, "409 no longer waiting: answered elsewhere, or its turn ended", http.StatusConflict)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// handleRename names a session: through the session itself when this server
// drives it (its clients see the title), else through the host under the
// log's lock; one live in another process is renamed there, or once joined.
func (s *Server) handleRename(w http.ResponseWriter, r *http.Request) {
	id, _, ok := s.sessionPath(r)
	if !ok {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Title string `json:"title"`
	}
	if !s.readJSON(w, r, &req) {
		return
	}
	var err error
	if d := s.driven.get(id); d != nil {
		err = d.live.Session.Rename(req.Title)
	} else if s.notDriving(w) {
		return
	} else {
		err = host.RenameSession(s.o.Dir, id, req.Title)
	}
	switch {
	case errors.Is(err, host.ErrNoSession):
		http.Error(w, err.Error(), http.StatusNotFound)
	case err != nil:
		http.Error(w, "400 "+err.Error(), http.StatusBadRequest)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// handleDelete deletes a session through the host; one this server drives is
// closed first, one live in another process is refused.
func (s *Server) handleDelete(w http.ResponseWriter, r *http.Request) {
	if s.notDriving(w) {
		return
	}
	id, _, ok := s.sessionPath(r)
	if !ok {
		http.NotFound(w, r)
		return
	}
	if d := s.driven.get(id); d != nil {
		if err := d.live.Session.Close(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	if err := host.DeleteSession(s.o.Dir, id); err != nil {
		code := http.StatusConflict
		if errors.Is(err, host.ErrNoSession) {
			code = http.StatusNotFound
		}
		http.Error(w, err.Error(), code)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleControl streams a driven session's moments the log does not hold, as
// server-sent events (the records come through /events, as for any session):
//
//	event: status  the status bar, replaced whole
//	event: ask     a permission request's or question's box, added
//	event: asked   the key of a box to remove: answered here or elsewhere
//	event: notice  something the user is told about their input
//	event: delta   a piece of the model's text as it streams, appended
//	event: stream  what streamed is void, or logged: cleared
//	event: ended   the session ended; nothing more comes
//
// A stream starts with the status and every box still waiting.
func (s *Server) handleControl(w http.ResponseWriter, r *http.Request) {
	id, _, ok := s.sessionPath(r)
	if !ok {
		http.NotFound(w, r)
		return
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	d := s.driven.get(id)
	var ch chan event
	if d != nil {
		ch, ok = d.subscribe()
	}
	if d == nil || !ok {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(sseEvent("ended", 0, nil))
		return
	}
	defer d.unsubscribe(ch)
	w.WriteHeader(http.StatusOK)
	if rc.Flush() != nil {
		return
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case e, ok := <-ch:
			if !ok {
				if s.driven.get(id) == nil { // ended, not dropped for falling behind
					_, _ = w.Write(sseEvent("ended", 0, nil))
				}
				return
			}
			if _, err := w.Write(sseEvent(e.name, 0, e.data)); err != nil {
				return
			}
			if rc.Flush() != nil {
				return
			}
		}
	}
}
