package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/dsh-dev/dsh/internal/session"
)

// stateView is where a session stands: running while a dsh process holds its
// log, else how its last turn ended. Kind is its badge's class and word.
type stateView struct {
	Kind  string // running, finished, failed, cancelled, interrupted
	Error string // failed: why
}

// sessionState reads where a session stands from its records (all of them, or
// the last ones): the last turn_end says how the session ended, unless a prompt
// came after it, whose turn then never ended (dsh was killed mid-turn).
func sessionState(recs []session.Record, live bool) stateView {
	if live {
		return stateView{Kind: "running"}
	}
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		if r.Type == session.TypeUser {
			return stateView{Kind: "interrupted"}
		}
		if r.Type != session.TypeTurnEnd {
			continue
		}
		switch r.StopReason {
		case "error":
			return stateView{Kind: "failed", Error: r.Error}
		case "cancelled":
			return stateView{Kind: "cancelled"}
		}
		return stateView{Kind: "finished"}
	}
	return stateView{Kind: "finished"}
}

// tailBytes is how much of a log's end the list reads for its state: a turn's
// end and what follows it (mode, model, allow records) are short lines.
const tailBytes = 64 << 10

// endRecords returns records of the log at path enough for sessionState: the
// complete lines among its last tailBytes, or, when those hold no prompt and no
// turn end (a turn's long records fill them), the last such record of the whole
// log. A line that does not decode is skipped; only the fields sessionState
// reads are kept.
func endRecords(path string) ([]session.Record, error) {
	recs, cut, err := tailRecords(path)
	if err != nil || !cut || slices.ContainsFunc(recs, endsState) {
		return recs, err
	}
	var last []session.Record
	err = session.Scan(path, func(r session.Record) error {
		if endsState(r) {
			last = []session.Record{{Type: r.Type, StopReason: r.StopReason, Error: r.Error}}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("web: read the state of %s: %w", path, err)
	}
	return last, nil
}

// endsState tells the records sessionState decides on.
func endsState(r session.Record) bool {
	return r.Type == session.TypeUser || r.Type == session.TypeTurnEnd
}

// tailRecords decodes the complete lines among the last tailBytes of the log at
// path; cut says whether the log is longer.
func tailRecords(path string) (_ []session.Record, cut bool, _ error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer func() { _ = f.Close() }() // read-only: nothing to lose
	st, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	off := max(0, st.Size()-tailBytes)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return nil, false, err
	}
	if off > 0 { // the first line is cut
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		} else {
			buf = nil
		}
	}
	var recs []session.Record
	for line := range bytes.SplitSeq(buf, []byte("\n")) {
		var p struct {
			Type       session.RecordType `json:"type"`
			StopReason string             `json:"stopReason"`
			Error      string             `json:"error"`
		}
		if json.Unmarshal(line, &p) == nil {
			recs = append(recs, session.Record{Type: p.Type, StopReason: p.StopReason, Error: p.Error})
		}
	}
	return recs, off > 0, nil
}
