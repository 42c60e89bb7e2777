package session

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// encOpts is the one encoder every line is written with: sorted map keys, and
// invalid UTF-8 (binary command output) replaced rather than refused, so a log
// write never fails on what a command printed.
var encOpts = json.JoinOptions(json.Deterministic(true), jsontext.AllowInvalidUTF8(true))

// FormatError is returned for a log written in a newer format than this build reads.
type FormatError struct {
	Session string // the session id, or the path when the header names none
	Version int
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("session %s was written by a newer dsh (format %d; this dsh reads up to %d)",
		e.Session, e.Version, FormatVersion)
}

// encode returns r as one log line, newline included, and the record as a reader
// of that line will see it. Callers hand out the decoded form, so a record seen
// live is the same value as the one read back from the file.
func encode(r Record) ([]byte, Record, error) {
	r.Time = r.Time.UTC()
	b, err := json.Marshal(r, encOpts)
	if err != nil {
		return nil, Record{}, fmt.Errorf("encode %s record: %w", r.Type, err)
	}
	var back Record
	if err := json.Unmarshal(b, &back); err != nil {
		return nil, Record{}, fmt.Errorf("encode %s record: it would not read back: %w", r.Type, err)
	}
	return append(b, '\n'), back, nil
}

// validate checks what every record of a given type must hold, so that consumers
// can rely on it. It applies to writes and reads alike.
func validate(r *Record) error {
	switch r.Type {
	case TypeHeader:
		if r.Version < 1 {
			return errors.New("header has no format version")
		}
		if !ValidID(r.SessionID) {
			return fmt.Errorf("header has an invalid session id %q", r.SessionID)
		}
	case TypeUser, TypeAssistant, TypeThinking, TypePlan, TypeTurnEnd:
	case TypeToolCall, TypeProgress:
		if r.CallID == "" {
			return fmt.Errorf("%s record has no callId", r.Type)
		}
	case TypeToolResult:
		if r.CallID == "" {
			return fmt.Errorf("%s record has no callId", r.Type)
		}
		if r.Result == nil {
			return fmt.Errorf("%s record has no result", r.Type)
		}
	default:
		return fmt.Errorf("unknown record type %q", r.Type)
	}
	// A time outside RFC 3339's years could be read but not written back.
	if y := r.Time.UTC().Year(); y < 0 || y > 9999 {
		return fmt.Errorf("record time %v is out of range", r.Time)
	}
	return nil
}

// decoder turns the lines of one log into records, checking that the first is a
// header of a format this build reads and that no other header follows.
type decoder struct {
	name   string // the log's path, for messages
	line   int
	header bool
}

// decode decodes one line (without its newline). Blank lines are counted but
// hold no record: ok is false for them.
func (d *decoder) decode(line []byte) (r Record, ok bool, err error) {
	d.line++
	if len(line) == 0 {
		return r, false, nil
	}
	if !d.header {
		if err := d.probeHeader(line); err != nil {
			return r, false, err
		}
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return r, false, d.errorf("%w", err)
	}
	if err := validate(&r); err != nil {
		return r, false, d.errorf("%w", err)
	}
	switch {
	case !d.header && r.Type != TypeHeader:
		return r, false, d.errorf("the first record is %q, not a header", r.Type)
	case d.header && r.Type == TypeHeader:
		return r, false, d.errorf("a second header")
	}
	d.header = true
	return r, true, nil
}

// probeHeader reads only the version of the first record, so that a newer format
// is refused with a clear message before its other fields can fail to decode.
func (d *decoder) probeHeader(line []byte) error {
	var h struct {
		Type      RecordType `json:"type"`
		Version   int        `json:"version"`
		SessionID string     `json:"sessionId"`
	}
	if err := json.Unmarshal(line, &h); err != nil {
		return d.errorf("not a session header: %w", err)
	}
	if h.Type == TypeHeader && h.Version > FormatVersion {
		name := h.SessionID
		if !ValidID(name) {
			name = d.name
		}
		return &FormatError{Session: name, Version: h.Version}
	}
	return nil
}

func (d *decoder) errorf(format string, args ...any) error {
	return fmt.Errorf("session log %s: line %d: %w", d.name, d.line, fmt.Errorf(format, args...))
}

// scan calls fn with every complete line of r (without its newline), read through
// a buffer of bufSize bytes, and returns the offset just past the last one. Bytes after it are a torn line — a write cut
// short by a crash — which readers skip and Open truncates away.
func scan(r io.Reader, bufSize int, fn func(line []byte) error) (int64, error) {
	br := bufio.NewReaderSize(r, bufSize)
	var off int64
	var long []byte // a line longer than the buffer, gathered in pieces
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			long = append(long, chunk...)
			continue
		case errors.Is(err, io.EOF):
			return off, nil
		case err != nil:
			return off, err
		}
		line := chunk
		if len(long) > 0 {
			long = append(long, chunk...)
			line = long
			long = long[:0]
		}
		off += int64(len(line))
		if err := fn(line[:len(line)-1]); err != nil {
			return off, err
		}
	}
}

// read decodes a whole log from r; name is used in messages. It also returns the
// offset just past the last complete line.
func read(r io.Reader, name string) ([]Record, int64, error) {
	d := decoder{name: name}
	var recs []Record
	// A big buffer: whole logs are read for replay, and speed matters there.
	off, err := scan(r, 1<<20, func(line []byte) error {
		rec, ok, err := d.decode(line)
		if ok {
			recs = append(recs, rec)
		}
		return err
	})
	if err != nil {
		return nil, off, err
	}
	if len(recs) == 0 {
		return nil, off, fmt.Errorf("session log %s: no header (empty or torn log)", name)
	}
	return recs, off, nil
}

// ReadFile reads a whole log. A torn last line is skipped; a line that does not
// decode anywhere else is an error naming its line number; a newer format is
// refused with a [*FormatError].
func ReadFile(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read-only: nothing to lose
	recs, _, err := read(f, path)
	return recs, err
}

// Fold drops progress records: what replay shows is always the tool result.
func Fold(recs []Record) []Record {
	out := make([]Record, 0, len(recs))
	for _, r := range recs {
		if r.Type != TypeProgress {
			out = append(out, r)
		}
	}
	return out
}

// Scan calls fn with each record of the log at path, in order, without holding the
// log in memory — replay of a long session stays small. A torn last line is
// skipped as by ReadFile.
func Scan(path string, fn func(Record) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // read-only: nothing to lose
	d := decoder{name: path}
	n := 0
	if _, err := scan(f, 1<<20, func(line []byte) error {
		rec, ok, err := d.decode(line)
		if err != nil || !ok {
			return err
		}
		n++
		return fn(rec)
	}); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("session log %s: no header (empty or torn log)", path)
	}
	return nil
}
