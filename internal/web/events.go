package web

import (
	"bytes"
	"cmp"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/session/usage"
	"github.com/dsh-dev/dsh/internal/view"
)

// handleEvents streams a session's new records as server-sent events. The page
// holds the first N records of the log and asks for the stream from N (after a
// dropped connection the browser resumes from the Last-Event-ID it saw). Each
// record is sent as an HTML fragment rendered by the functions that render the page:
//
//	event: item      a message, turn end or call: appended to the page, or
//	                 replacing the element with its id (a call's result replaces
//	                 the running call, new session totals the old ones)
//	event: progress  a chunk of a running command's output: appended, as text, to
//	                 the output block of the call the fragment's data-call names
//
// The event id is the number of records delivered so far. A record that changes
// the session's totals is followed by their item, with the same id: a browser
// that resumes after a drop between the two shows the totals of the record
// before until the next change.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	id, path, ok := s.sessionPath(r)
	if !ok {
		http.NotFound(w, r)
		return
	}
	from, err := strconv.Atoi(cmp.Or(r.Header.Get("Last-Event-ID"), r.URL.Query().Get("from"), "0"))
	if err != nil || from < 0 {
		http.Error(w, "bad event position", http.StatusBadRequest)
		return
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return
	}
	st := s.newStream(id, from)
	_ = session.Follow(r.Context(), path, func(rec session.Record) error {
		events := st.next(rec)
		if len(events) == 0 {
			return nil
		}
		var b bytes.Buffer
		for _, e := range events {
			b.Write(sseEvent(e.name, st.n, e.data))
		}
		if _, err := w.Write(b.Bytes()); err != nil {
			return err
		}
		return rc.Flush()
	})
}

// stream turns a session's records into the events of a page that holds the
// first from of them.
type stream struct {
	b       *builder
	p       *view.Presenter
	usage   usage.Fold
	from, n int
}

// event is one server-sent event: its name and its HTML fragment.
type event struct {
	name string
	data []byte
}

func (s *Server) newStream(sid string, from int) *stream {
	return &stream{b: s.newBuilder(sid, false), p: newPresenter(s.o.Registry, sid), from: from}
}

// next is the events for the next record of the log: none for one the page
// already has or that shows nothing.
func (st *stream) next(rec session.Record) []event {
	st.n++
	changed := st.usage.Record(rec)
	if st.n <= st.from {
		// Already on the page: the presenter only needs to know the calls.
		if rec.Type == session.TypeToolCall {
			st.p.Present(rec)
		}
		return nil
	}
	return st.b.update(st.p, &st.usage, rec, changed)
}

// update renders what the page of a session that gets rec next must change:
// an "item" (appended, or replacing the element with its id) or a "progress"
// chunk, nothing when rec shows nothing, and the session's totals when rec
// changed them (fold has folded it). It is the one function from a record to
// the page: the items a page is served with are b.item of the same records, its
// totals the same fold's (see sessionPage), so a page that followed the log
// shows what a reload would.
func (b *builder) update(p *view.Presenter, fold *usage.Fold, rec session.Record, changed bool) []event {
	var w bytes.Buffer
	if rec.Type == session.TypeProgress {
		out{&w}.chunk(chunkView{ElemID: callElemID(rec.CallID), Text: rec.Chunk})
		return []event{{"progress", w.Bytes()}}
	}
	var events []event
	pi := p.Present(rec)
	if it := b.item(pi, pi.Name); it != nil {
		if it.End != nil {
			it.End.Usage.Totals = fold.LastTurn()
		}
		out{&w}.item(it)
		events = append(events, event{"item", w.Bytes()})
	}
	if changed {
		var u bytes.Buffer
		out{&u}.usage(totalsView(fold.Total()))
		events = append(events, event{"item", u.Bytes()})
	}
	return events
}

// chunkView is a progress event's fragment.
type chunkView struct{ ElemID, Text string }

// sseEvent frames data as one event. A CR or LF would end a data line, so LFs
// split the data into several data lines (the browser joins them with LF again)
// and a CR, which can only be inside text or an attribute, becomes a reference.
func sseEvent(event string, id int, data []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "id: %d\nevent: %s\n", id, event)
	for line := range strings.SplitSeq(string(data), "\n") {
		b.WriteString("data: ")
		b.WriteString(strings.ReplaceAll(line, "\r", "&#13;"))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return b.Bytes()
}
