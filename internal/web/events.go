package web

import (
	"bytes"
	"cmp"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/dsh-dev/dsh/internal/session"
)

// handleEvents streams a session's new records as server-sent events. The page
// holds the first N records of the log and asks for the stream from N (after a
// dropped connection the browser resumes from the Last-Event-ID it saw). Each
// record is sent as an HTML fragment rendered by the page's own templates:
//
//	event: item      a message, plan, turn end or call: appended to the page, or
//	                 replacing the element with its id (a call's result replaces
//	                 the running call)
//	event: progress  a chunk of a running command's output: appended, as text, to
//	                 the output block of the call the fragment's data-call names
//
// The event id is the number of records delivered so far.
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
	b := s.newBuilder(id, false)
	p := newPresenter(s.o.Registry, id)
	n := 0
	var frag bytes.Buffer
	_ = session.Follow(r.Context(), path, func(rec session.Record) error {
		n++
		if n <= from {
			// Already on the page: the presenter only needs to know the calls.
			if rec.Type == session.TypeToolCall {
				p.Present(rec)
			}
			return nil
		}
		frag.Reset()
		event := "item"
		switch rec.Type {
		case session.TypeProgress:
			event = "progress"
			if err := templates().ExecuteTemplate(&frag, "chunk", chunkView{ElemID: callElemID(rec.CallID), Text: rec.Chunk}); err != nil {
				return err
			}
		case session.TypeHeader, session.TypeMode, session.TypeAllow, session.TypeModel, session.TypeCompaction, session.TypeInstructions:
			return nil
		case session.TypeUser, session.TypeAssistant, session.TypeThinking, session.TypeToolCall,
			session.TypeToolResult, session.TypePlan, session.TypeTurnEnd, session.TypeDamaged:
			pi := p.Present(rec)
			it := b.item(pi, pi.Name)
			if it == nil {
				return nil
			}
			if err := templates().ExecuteTemplate(&frag, "item", it); err != nil {
				return err
			}
		}
		if _, err := w.Write(sseEvent(event, n, frag.Bytes())); err != nil {
			return err
		}
		return rc.Flush()
	})
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
