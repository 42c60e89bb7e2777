package session

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const (
	hdr  = `{"type":"header","time":"2025-03-14T08:30:00Z","version":1,"sessionId":"s1","cwd":"/p"}`
	user = `{"type":"user","time":"2025-03-14T08:30:01Z","text":"hi"}`
	asst = `{"type":"assistant","time":"2025-03-14T08:30:02Z","text":"hello"}`
)

func writeLog(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s1.jsonl")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNewerVersionRefused(t *testing.T) {
	// A newer format may change any field; only the version is read.
	newer := `{"type":"header","time":{"unix":1},"version":2,"sessionId":"20250314-093000-abcdefgh","future":true}` + "\n" + user + "\n"
	p := writeLog(t, newer)
	want := "session 20250314-093000-abcdefgh was written by a newer dsh (format 2; this dsh reads up to 1)"

	_, err := ReadFile(p)
	var fe *FormatError
	if !errors.As(err, &fe) || err.Error() != want {
		t.Errorf("ReadFile = %v, want %q", err, want)
	}
	if _, err := Open(p, Options{}, nil); err == nil || err.Error() != want {
		t.Errorf("Open = %v, want %q", err, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := Follow(ctx, p, func(Record) error { return nil }); err == nil || err.Error() != want {
		t.Errorf("Follow = %v, want %q", err, want)
	}
	raw, _ := os.ReadFile(p)
	if string(raw) != newer {
		t.Error("Open modified a newer log")
	}
}

func TestReadErrors(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    string // "" means success
		n       int    // records on success
	}{
		{"ok", hdr + "\n" + user + "\n", "", 2},
		{"torn last line", hdr + "\n" + user + "\n" + `{"type":"assi`, "", 2},
		{"complete json without newline is torn", hdr + "\n" + user + "\n" + asst, "", 2},
		{"blank lines are skipped", hdr + "\n\n" + user + "\n", "", 2},
		{"corrupt middle line", hdr + "\n" + user + "\n" + `{"type":"user",` + "\n" + asst + "\n", "line 3:", 0},
		{"corrupt last complete line", hdr + "\n" + user + "\n" + `not json` + "\n", "line 3:", 0},
		{"unknown type", hdr + "\n" + `{"type":"gossip","time":"2025-03-14T08:30:01Z"}` + "\n", `line 2: unknown record type "gossip"`, 0},
		{"wrong field type", hdr + "\n" + `{"type":"user","time":"2025-03-14T08:30:01Z","text":3}` + "\n", "line 2:", 0},
		{"bad time", hdr + "\n" + `{"type":"user","time":"yesterday"}` + "\n", "line 2:", 0},
		{"duplicate member", hdr + "\n" + `{"type":"user","text":"a","text":"b"}` + "\n", "line 2:", 0},
		{"invalid utf-8", hdr + "\n" + "{\"type\":\"user\",\"text\":\"\xff\"}\n", "line 2:", 0},
		{"result without result", hdr + "\n" + `{"type":"tool_result","callId":"c"}` + "\n", "line 2: tool_result record has no result", 0},
		{"second header", hdr + "\n" + hdr + "\n", "line 2: a second header", 0},
		{"first record not a header", user + "\n" + hdr + "\n", `line 1: the first record is "user", not a header`, 0},
		{"header without version", `{"type":"header","sessionId":"s1"}` + "\n", "line 1: header has no format version", 0},
		{"header with bad id", `{"type":"header","version":1,"sessionId":"../x"}` + "\n", "line 1: header has an invalid session id", 0},
		{"empty", "", "no header", 0},
		{"only a torn header", `{"type":"header","vers`, "no header", 0},
		{"not json at all", "hello\n", "line 1: not a session header", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeLog(t, tt.content)
			recs, err := ReadFile(p)
			if tt.want == "" {
				if err != nil || len(recs) != tt.n {
					t.Fatalf("ReadFile = %d records, %v; want %d records", len(recs), err, tt.n)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), p) {
				t.Errorf("ReadFile = %v, want an error naming the file and containing %q", err, tt.want)
			}
		})
	}
}

func TestReadLongLines(t *testing.T) {
	// Lines longer than the reader's buffer are gathered whole.
	big := strings.Repeat("é", 1<<20)
	l := create(t, t.TempDir(), "s1", Options{})
	appendAll(t, l, []Record{{Type: TypeUser, Text: big}, {Type: TypeAssistant, Text: "short"}, {Type: TypeUser, Text: big + "!"}})
	l.Close()
	recs, err := ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 || recs[1].Text != big || recs[2].Text != "short" || recs[3].Text != big+"!" {
		t.Errorf("long lines did not read back (%d records)", len(recs))
	}
	if d := cmp.Diff(recs, follow(t, l.Path(), 4)); d != "" {
		t.Errorf("Follow differs from ReadFile:\n%s", d)
	}
}

// TestFollowOtherWriter follows a log while another *Log appends to it, a record
// at a time, and checks each arrives.
func TestFollowOtherWriter(t *testing.T) {
	dir := t.TempDir()
	l := create(t, dir, "s1", Options{Now: clock(), ProgressCap: 10})
	appendAll(t, l, turn()[:2])

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan Record, 100)
	done := make(chan error, 1)
	go func() { done <- Follow(ctx, l.Path(), func(r Record) error { got <- r; return nil }) }()

	next := func() Record {
		t.Helper()
		select {
		case r := <-got:
			return r
		case err := <-done:
			t.Fatalf("Follow returned early: %v", err)
		case <-time.After(wait):
			t.Fatal("Follow did not deliver a record")
		}
		return Record{}
	}
	for _, want := range records(t, l) {
		if d := cmp.Diff(want, next()); d != "" {
			t.Fatalf("existing record differs:\n%s", d)
		}
	}
	for _, r := range turn()[2:] {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
		if overCap(r) {
			continue
		}
		want := records(t, l)
		if d := cmp.Diff(want[len(want)-1], next()); d != "" {
			t.Fatalf("appended record differs:\n%s", d)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Follow after cancel = %v", err)
		}
	case <-time.After(wait):
		t.Fatal("Follow did not return after cancel")
	}
	select {
	case r := <-got:
		t.Errorf("Follow delivered an unexpected record %+v", r)
	default:
	}
}

// TestFollowTornThenRepaired: a writer crashes mid-line, a new writer reopens
// (truncating the torn bytes) and appends. Follow must hold the partial line and
// then deliver the new record, never a mix of the two.
func TestFollowTornThenRepaired(t *testing.T) {
	dir := t.TempDir()
	l := create(t, dir, "s1", Options{Now: clock()})
	appendAll(t, l, turn()[:1])
	l.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan Record, 100)
	done := make(chan error, 1)
	go func() { done <- Follow(ctx, l.Path(), func(r Record) error { got <- r; return nil }) }()
	for range 2 {
		select {
		case <-got:
		case <-time.After(wait):
			t.Fatal("Follow did not deliver the existing records")
		}
	}

	f, err := os.OpenFile(l.Path(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"assistant","time":"2025-03-14T08:31:00Z","text":"torn`)
	f.Close()
	// Let Follow see the partial line at least once; the test holds either way.
	time.Sleep(2 * pollInterval)

	l2, err := Open(l.Path(), Options{Now: clock()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	appendAll(t, l2, []Record{{Type: TypeAssistant, Text: "whole"}})
	select {
	case r := <-got:
		if r.Type != TypeAssistant || r.Text != "whole" {
			t.Errorf("Follow delivered %+v, want the new assistant record", r)
		}
	case err := <-done:
		t.Fatalf("Follow returned: %v", err)
	case <-time.After(wait):
		t.Fatal("Follow did not deliver the record after the repair")
	}
}

// A partial line written in two pieces is delivered once complete.
func TestFollowPartialLine(t *testing.T) {
	p := writeLog(t, hdr+"\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan Record, 10)
	done := make(chan error, 1)
	go func() { done <- Follow(ctx, p, func(r Record) error { got <- r; return nil }) }()
	<-got

	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString(user[:20])
	time.Sleep(2 * pollInterval)
	f.WriteString(user[20:] + "\n" + asst + "\n")
	for _, want := range []string{"hi", "hello"} {
		select {
		case r := <-got:
			if r.Text != want {
				t.Errorf("got %q, want %q", r.Text, want)
			}
		case err := <-done:
			t.Fatalf("Follow returned: %v", err)
		case <-time.After(wait):
			t.Fatal("Follow did not deliver the completed line")
		}
	}
}

func TestFollowErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := Follow(ctx, filepath.Join(t.TempDir(), "nope.jsonl"), func(Record) error { return nil }); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Follow of a missing file = %v", err)
	}
	// A damaged line is handed out as such, and following goes on after it.
	p := writeLog(t, hdr+"\n"+"garbage\n"+user+"\n")
	var got []Record
	fctx, stop := context.WithCancel(ctx)
	err := Follow(fctx, p, func(r Record) error {
		if got = append(got, r); len(got) == 3 {
			stop()
		}
		return nil
	})
	stop()
	if err != nil || len(got) != 3 || got[1].Type != TypeDamaged || !strings.Contains(got[1].Error, "line 2") || got[2].Type != TypeUser {
		t.Errorf("Follow of a log with a damaged line = %v, %+v; want header, damaged line 2, user", err, got)
	}
	if err := Follow(ctx, writeLog(t, "garbage\n"), func(Record) error { return nil }); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("Follow of a log without a header = %v, want line 1", err)
	}
	boom := errors.New("boom")
	p = writeLog(t, hdr+"\n"+user+"\n")
	if err := Follow(ctx, p, func(Record) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("Follow = %v, want fn's error", err)
	}
}

// FuzzRead: reading never panics, and whatever reads back is written back
// (through the one encoder) to the same records.
func FuzzRead(f *testing.F) {
	f.Add([]byte(hdr + "\n" + user + "\n" + asst + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, _, err := readAll(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		var buf bytes.Buffer
		for _, r := range recs {
			line, _, err := encode(r)
			if err != nil {
				t.Fatalf("a record that was read cannot be written: %v\n%+v", err, r)
			}
			buf.Write(line)
		}
		again, off, err := readAll(bytes.NewReader(buf.Bytes()), "fuzz")
		if err != nil {
			t.Fatalf("re-encoded log does not read: %v\n%s", err, buf.Bytes())
		}
		if off != int64(buf.Len()) {
			t.Fatalf("re-encoded log has a torn tail at %d of %d", off, buf.Len())
		}
		if !cmp.Equal(recs, again, roundTrip) {
			t.Fatalf("round trip changed records (-read +again):\n%s", cmp.Diff(recs, again, roundTrip))
		}
	})
}

// roundTrip equates what the encoder may change without changing meaning: the
// whitespace of raw JSON, and nil versus empty slices.
var roundTrip = cmp.Options{
	cmp.Comparer(sameJSON),
	cmp.FilterPath(func(p cmp.Path) bool { return p.Last().Type() != reflect.TypeFor[jsontext.Value]() }, cmpopts.EquateEmpty()),
}

// sameJSON compares raw JSON values up to insignificant whitespace, which the
// encoder removes.
func sameJSON(a, b jsontext.Value) bool {
	ca, cb := jsontext.Value(bytes.Clone(a)), jsontext.Value(bytes.Clone(b))
	if ca.Compact() != nil || cb.Compact() != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca, cb)
}

// readAll reads a whole log from r.
func readAll(r io.Reader, name string) ([]Record, int64, error) {
	var recs []Record
	off, err := scanRecords(r, name, func(rec Record) error {
		recs = append(recs, rec)
		return nil
	})
	return recs, off, err
}
