package session

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/jsonfast"
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
	b, ok := encodeHeader(r)
	if !ok {
		var err error
		if b, err = json.Marshal(r, encOpts); err != nil {
			return nil, Record{}, fmt.Errorf("encode %s record: %w", r.Type, err)
		}
	}
	// Read back as a reload reads it (decodeFast, else json.Unmarshal).
	var back Record
	if !decodeFast(b, &back, nil) {
		back = Record{}
		if err := json.Unmarshal(b, &back); err != nil {
			return nil, Record{}, fmt.Errorf("encode %s record: it would not read back: %w", r.Type, err)
		}
	}
	return append(b, '\n'), back, nil
}

// promptPart checks a block of a user prompt's content: an image with data
// and a MIME type, an attached resource with a URI, or a paste.
func promptPart(c card.Content) error {
	switch c.Type {
	case card.ContentImage:
		if c.Data == "" || c.MimeType == "" || c.Text != "" {
			return errors.New("an image needs data and a MIME type (and may name its file)")
		}
	case card.ContentResource:
		if c.URI == "" || c.Data != "" || c.MimeType != "" {
			return errors.New("a resource needs a URI and text only")
		}
	case card.ContentPaste:
		if c.URI != "" || c.Data != "" || c.MimeType != "" {
			return errors.New("a paste holds text only")
		}
	case card.ContentExpansion:
		if c.URI == "" || c.Data != "" || c.MimeType != "" {
			return errors.New("an expansion needs the command it expands and text only")
		}
	case card.ContentText:
		return errors.New("the prompt's text is the record's text, not a content block")
	default:
		return fmt.Errorf("unknown content type %q", c.Type)
	}
	return nil
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
	case TypeUser:
		for i, c := range r.Content {
			if err := promptPart(c); err != nil {
				return fmt.Errorf("user record content %d: %w", i, err)
			}
		}
	case TypeAssistant, TypeThinking, TypePlan, TypeTurnEnd:
	case TypeModel:
		if r.Model == "" {
			return errors.New("model record has no model")
		}
	case TypeMode:
		if r.Mode == "" {
			return errors.New("mode record has no mode")
		}
	case TypeAllow:
		if len(r.Keys) == 0 {
			return errors.New("allow record has no keys")
		}
	case TypeDamaged:
		return errors.New("a damaged-line marker is not a record")
	case TypeCompaction:
		if r.Text == "" || r.Keep < 0 {
			return errors.New("compaction record has no summary or a negative keep")
		}
	case TypeInstructions:
		if r.Path == "" {
			return errors.New("instructions record has no path")
		}
	case TypeCheckpoint:
		if c := r.Checkpoint; c == nil || c.Prompt < 1 || c.Phase != PhaseBefore && c.Phase != PhaseAfter {
			return errors.New("checkpoint record has no prompt or phase")
		}
	case TypeRestore:
		if c := r.Restore; c == nil || c.To < 1 || c.Before == "" {
			return errors.New("restore record has no change or snapshot")
		}
	case TypeHook:
		if h := r.Hook; h == nil || h.Event == "" {
			return errors.New("hook record has no event")
		}
	case TypeCommand:
		if !strings.HasPrefix(r.Text, "/") {
			return errors.New("command record has no command")
		}
	case TypeReply:
		if r.Text == "" {
			return errors.New("reply record has no text")
		}
	case TypeDecision:
		if r.CallID == "" || !slices.Contains(Decisions, r.Decision) {
			return errors.New("decision record has no call or no decision")
		}
	case TypeTitle:
		if strings.TrimSpace(r.Text) == "" {
			return errors.New("title record has no title")
		}
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
	name    string // the log's path, for messages
	line    int
	header  bool
	lenient bool // a bad line after the header is a TypeDamaged record
	// meta, if set, decodes a result's meta in the record's pass; calls are
	// the tool names of the calls without a result yet, which it needs.
	meta  MetaReader
	calls map[string]string
	// rec is what a line is decoded into, and rd its reader: the decoding's
	// closures hold them, which would move both to the heap for every line.
	rec Record
	rd  jsonfast.Reader
}

// decode decodes one line (without its newline). Blank lines are counted but
// hold no record: ok is false for them.
func (d *decoder) decode(line []byte) (r Record, ok bool, err error) {
	r, ok, err = d.decodeStrict(line)
	if err != nil && d.lenient && d.header {
		var fe *FormatError
		if !errors.As(err, &fe) {
			return Record{Type: TypeDamaged, Error: err.Error()}, true, nil
		}
	}
	return r, ok, err
}

func (d *decoder) decodeStrict(line []byte) (r Record, ok bool, err error) {
	d.line++
	if len(line) == 0 {
		return r, false, nil
	}
	if !d.header {
		if err := d.probeHeader(line); err != nil {
			return r, false, err
		}
	}
	rec := &d.rec
	*rec = Record{}
	d.rd.Reset(line)
	if !decodeFastWith(&d.rd, rec, d.metaOf) {
		*rec = Record{}
		if err := json.Unmarshal(line, rec); err != nil {
			return r, false, d.errorf("%w", err)
		}
	}
	r = *rec
	*rec = Record{} // a follower idles between lines: the last one (a result of MiBs) is not kept
	if err := validate(&r); err != nil {
		return r, false, d.errorf("%w", err)
	}
	if d.meta != nil && r.Type == TypeToolCall {
		if d.calls == nil {
			d.calls = map[string]string{}
		}
		d.calls[r.CallID] = r.Name
	} else if d.meta != nil && r.Type == TypeToolResult {
		delete(d.calls, r.CallID)
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

// metaOf reads the meta of the result of call id with d.meta; ok is false
// when it does not (see MetaReader).
func (d *decoder) metaOf(id string, r *jsonfast.Reader) (jsontext.Value, bool) {
	name, ok := d.calls[id]
	if !ok || d.meta == nil {
		return nil, false
	}
	return d.meta.ReadMeta(name, r)
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

// scanRecords decodes a log from r record by record; name is used in messages.
// It returns the offset just past the last complete line.
func scanRecords(r io.Reader, name string, fn func(Record) error) (int64, error) {
	return scanLog(r, name, false, fn)
}

// scanLog is scanRecords; lenient turns a line after the header that does not
// decode into a TypeDamaged record instead of an error.
func scanLog(r io.Reader, name string, lenient bool, fn func(Record) error) (int64, error) {
	d := &decoder{name: name, lenient: lenient}
	return d.scan(r, fn)
}

// scan is scanLog with d.
func (d *decoder) scan(r io.Reader, fn func(Record) error) (int64, error) {
	name := d.name
	n := 0
	// A big buffer: whole logs are read for replay, and speed matters there.
	off, err := scan(r, 1<<20, func(line []byte) error {
		rec, ok, err := d.decode(line)
		if err != nil || !ok {
			return err
		}
		n++
		return fn(rec)
	})
	if err != nil {
		return off, err
	}
	if n == 0 {
		return off, fmt.Errorf("session log %s: no header (empty or torn log)", name)
	}
	return off, nil
}

// ReadFile reads a whole log. A torn last line is skipped; a line that does not
// decode anywhere else is an error naming its line number; a newer format is
// refused with a [*FormatError]. Test oracle: dsh reads logs with Scan, Open
// and ReadLenient; tests read a whole log strictly to check it.
func ReadFile(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read-only: nothing to lose
	var recs []Record
	_, err = scanRecords(f, path, func(r Record) error {
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return recs, nil
}

// ReadLenient reads a whole log like ReadFile, but a line after the header that
// does not decode becomes a TypeDamaged record instead of an error.
func ReadLenient(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read-only: nothing to lose
	var recs []Record
	if _, err := scanLog(f, path, true, func(r Record) error {
		recs = append(recs, r)
		return nil
	}); err != nil {
		return nil, err
	}
	return recs, nil
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
	_, err = scanRecords(f, path, fn)
	return err
}

// ScanPrefix is Scan of the log's first size bytes (Log.Size at some moment),
// leniently as a follower reads: a live session goes on appending after them.
func ScanPrefix(path string, size int64, fn func(Record) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // read-only: nothing to lose
	_, err = scanLog(io.LimitReader(f, size), path, true, fn)
	return err
}
