package session

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// wait is how long a test waits for something that should happen promptly. It is
// a deadlock guard, never a measurement.
const wait = 20 * time.Second

// clock returns a Now that steps one millisecond per call from a fixed instant in
// a non-UTC zone, so that tests see both determinism and the UTC conversion.
func clock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2025, 3, 14, 9, 30, 0, 123456789, time.FixedZone("CET", 3600))
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Millisecond)
		return t
	}
}

// turn is a typical turn: every record type, args with insignificant whitespace,
// and four progress chunks of which, with a cap of 10, the last two overflow.
func turn() []Record {
	one := 1
	return []Record{
		{Type: TypeUser, Text: "fix the bug in main.go"},
		{Type: TypeThinking, Text: "Let me look.", Signature: "sig=="},
		{Type: TypeAssistant, Text: "I'll read it first."},
		{Type: TypeToolCall, CallID: "c1", Name: "read", Args: jsontext.Value(`{ "path" : "main.go" }`)},
		{Type: TypeToolResult, CallID: "c1", Result: &tool.Result{
			Content: []card.Content{card.Text("<path>main.go</path>\n1: package main")},
			Meta:    jsontext.Value(`{"path":"main.go","offset":1,"lines":[{"number":1,"text":"package main"}],"totalLines":1}`),
		}},
		{Type: TypePlan, Plan: []tool.PlanEntry{{Content: "fix", Status: "in_progress", Priority: "high"}}},
		{Type: TypeToolCall, CallID: "c2", Name: "bash", Args: jsontext.Value(`{"command":"go test"}`)},
		{Type: TypeProgress, CallID: "c2", Chunk: "aaaa"},
		{Type: TypeProgress, CallID: "c2", Chunk: "bbbb"},
		{Type: TypeProgress, CallID: "c2", Chunk: "cccc"},
		{Type: TypeProgress, CallID: "c2", Chunk: "dd"},
		{Type: TypeToolResult, CallID: "c2", Result: &tool.Result{
			Content: []card.Content{card.Text("FAIL")}, IsError: true,
			Meta: jsontext.Value(fmt.Sprintf(`{"exitCode":%d}`, one)),
		}},
		{Type: TypeAssistant, Text: "Fixed."},
		{Type: TypeTurnEnd, StopReason: "end_turn", Usage: &Usage{InputTokens: 1200, OutputTokens: 80}},
	}
}

// overCap says which records of turn() a cap of 10 keeps out of the file.
func overCap(r Record) bool {
	return r.Type == TypeProgress && (r.Chunk == "cccc" || r.Chunk == "dd")
}

func without(recs []Record, drop func(Record) bool) []Record {
	var out []Record
	for _, r := range recs {
		if !drop(r) {
			out = append(out, r)
		}
	}
	return out
}

func create(t *testing.T, dir, id string, o Options) *Log {
	t.Helper()
	l, err := Create(dir, id, "/work/project", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func appendAll(t *testing.T, l *Log, recs []Record) {
	t.Helper()
	for _, r := range recs {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
}

// follow runs Follow until it has delivered n records.
func follow(t *testing.T, path string, n int) []Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var got []Record
	err := Follow(ctx, path, func(r Record) error {
		got = append(got, r)
		if len(got) == n {
			cancel()
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Follow: %v", err)
	}
	if len(got) != n {
		t.Fatalf("Follow delivered %d records before the deadline, want %d", len(got), n)
	}
	return got
}

// TestLiveEqualsReplay is the stream's central promise: what Put returns (what
// live subscribers get), ReadFile and Follow are the same values, except over-cap
// progress, which only the live stream has.
func TestLiveEqualsReplay(t *testing.T) {
	dir := t.TempDir()
	l := create(t, dir, "s1", Options{Now: clock(), ProgressCap: 10})
	live := []Record{l.Header()}
	for _, r := range turn() {
		rec, err := l.Put(r)
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, rec)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	file, err := ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	followed := follow(t, l.Path(), len(file))

	if n := len(live) - len(without(live, overCap)); n != 2 {
		t.Errorf("live saw %d over-cap progress records, want 2", n)
	}
	for name, got := range map[string][]Record{"ReadFile": file, "Follow": followed} {
		if d := cmp.Diff(without(live, overCap), got); d != "" {
			t.Errorf("%s differs from live (-live +%s):\n%s", name, name, d)
		}
	}
	if len(file) != 1+len(turn())-2 {
		t.Errorf("file has %d records, want header + %d", len(file), len(turn())-2)
	}
}

// TestAppendNormalizes checks what a record becomes: UTC RFC 3339 times, compact
// args, and the header Create writes.
func TestAppendNormalizes(t *testing.T) {
	dir := t.TempDir()
	l := create(t, dir, "s1", Options{Now: clock()})
	appendAll(t, l, turn()[:4])
	l.Close()
	raw, err := os.ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	wantHeader := `{"type":"header","time":"2025-03-14T08:30:00.124456789Z","version":1,"sessionId":"s1","cwd":"/work/project"}`
	if lines[0] != wantHeader {
		t.Errorf("header line\n got %s\nwant %s", lines[0], wantHeader)
	}
	wantCall := `{"type":"tool_call","time":"2025-03-14T08:30:00.128456789Z","callId":"c1","name":"read","args":{"path":"main.go"}}`
	if lines[4] != wantCall {
		t.Errorf("tool call line\n got %s\nwant %s", lines[4], wantCall)
	}
	h := l.Header()
	if h.SessionID != "s1" || h.Version != FormatVersion || h.Cwd != "/work/project" || h.Time.Location() != time.UTC {
		t.Errorf("Header() = %+v", h)
	}
	if l.ID() != "s1" {
		t.Errorf("ID() = %q", l.ID())
	}
}

// A record's own time is kept; only a zero time is stamped.
func TestAppendKeepsTime(t *testing.T) {
	l := create(t, t.TempDir(), "s1", Options{Now: clock()})
	at := time.Date(2024, 1, 2, 3, 4, 5, 6, time.UTC)
	appendAll(t, l, []Record{{Type: TypeUser, Text: "hi", Time: at}})
	if got := records(t, l)[1].Time; !got.Equal(at) {
		t.Errorf("time = %v, want %v", got, at)
	}
}

func TestAppendInvalidUTF8IsReplaced(t *testing.T) {
	l := create(t, t.TempDir(), "s1", Options{})
	got := append([]Record{l.Header()}, putAll(t, l, []Record{{Type: TypeToolCall, CallID: "c", Name: "bash"}, {Type: TypeProgress, CallID: "c", Chunk: "ok\xff\xfe"}})...)
	l.Close()
	if got[2].Chunk != "ok\ufffd\ufffd" {
		t.Errorf("chunk = %q, want invalid bytes replaced", got[2].Chunk)
	}
	file, err := ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(got, file); d != "" {
		t.Errorf("file differs from live:\n%s", d)
	}
}

func TestAppendRefuses(t *testing.T) {
	tests := []struct {
		name string
		rec  Record
		want string
	}{
		{"header", Record{Type: TypeHeader, Version: 1, SessionID: "x"}, "already has a header"},
		{"unknown type", Record{Type: "gossip"}, `unknown record type "gossip"`},
		{"empty type", Record{}, `unknown record type ""`},
		{"call without id", Record{Type: TypeToolCall, Name: "read"}, "no callId"},
		{"progress without id", Record{Type: TypeProgress, Chunk: "x"}, "no callId"},
		{"result without result", Record{Type: TypeToolResult, CallID: "c"}, "no result"},
		{"invalid args", Record{Type: TypeToolCall, CallID: "c", Args: jsontext.Value(`{"a":`)}, "encode tool_call record"},
	}
	l := create(t, t.TempDir(), "s1", Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := l.Append(tt.rec)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Append = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	// Nothing refused reached the file.
	l.Close()
	recs, err := ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Errorf("file has %d records, want only the header", len(recs))
	}
	if err := l.Append(Record{Type: TypeUser}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Append after Close = %v, want closed", err)
	}
}

// TestTornLine simulates a crash mid-write: ReadFile skips the torn line, Open
// repairs it, appends continue, and nothing before it is lost.
func TestTornLine(t *testing.T) {
	dir := t.TempDir()
	l := create(t, dir, "s1", Options{Now: clock()})
	appendAll(t, l, turn()[:5])
	before := records(t, l)
	l.Close()

	torn := `{"type":"assistant","time":"2025-03-14T08:31:00Z","text":"half a th`
	f, err := os.OpenFile(l.Path(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(torn); err != nil {
		t.Fatal(err)
	}
	f.Close()

	got, err := ReadFile(l.Path())
	if err != nil {
		t.Fatalf("ReadFile with a torn line: %v", err)
	}
	if d := cmp.Diff(before, got); d != "" {
		t.Errorf("ReadFile (-before +got):\n%s", d)
	}

	l2, err := Open(l.Path(), Options{Now: clock()}, nil)
	if err != nil {
		t.Fatalf("Open with a torn line: %v", err)
	}
	defer l2.Close()
	if d := cmp.Diff(before, records(t, l2)); d != "" {
		t.Errorf("Open's records (-before +got):\n%s", d)
	}
	appendAll(t, l2, turn()[5:7])
	after := records(t, l2)
	l2.Close()

	raw, err := os.ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("half a th")) {
		t.Error("the torn line is still in the file")
	}
	got, err = ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(after, got); d != "" {
		t.Errorf("after repair (-want +got):\n%s", d)
	}
	if d := cmp.Diff(before, got[:len(before)]); d != "" {
		t.Errorf("records before the torn line were lost:\n%s", d)
	}
	if len(got) != len(before)+2 {
		t.Errorf("got %d records, want %d", len(got), len(before)+2)
	}
}

func TestOpenContinuesProgressCap(t *testing.T) {
	dir := t.TempDir()
	o := Options{Now: clock(), ProgressCap: 10}
	l := create(t, dir, "s1", o)
	appendAll(t, l, []Record{{Type: TypeToolCall, CallID: "c", Name: "bash"}, {Type: TypeProgress, CallID: "c", Chunk: "12345678"}})
	l.Close()
	l2, err := Open(l.Path(), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	appendAll(t, l2, []Record{{Type: TypeProgress, CallID: "c", Chunk: "abc"}, {Type: TypeProgress, CallID: "d", Chunk: "abc"}})
	var chunks []string
	for _, r := range records(t, l2) {
		chunks = append(chunks, r.Chunk)
	}
	if want := []string{"", "", "12345678", "abc"}; !cmp.Equal(chunks, want) {
		t.Errorf("persisted chunks = %q, want %q (the reopened call stays capped)", chunks, want)
	}
}

func TestProgressCap(t *testing.T) {
	tests := []struct {
		name   string
		cap    int
		chunks []string // alternately for calls a and b
		want   []string // persisted, in order
	}{
		{"under", 10, []string{"12345", "12345", "12345", "12345"}, []string{"12345", "12345", "12345", "12345"}},
		{"exactly at cap", 4, []string{"12", "ab", "34", "cd"}, []string{"12", "ab", "34", "cd"}},
		{"over stops the call", 4, []string{"123", "a", "45", "b", "6", "c"}, []string{"123", "a", "b", "c"}},
		{"big first chunk", 4, []string{"12345", "a", "6", "b"}, []string{"a", "b"}},
		{"none persisted", -1, []string{"1", "a"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := create(t, t.TempDir(), "s1", Options{ProgressCap: tt.cap})
			var live []Record
			for i, c := range tt.chunks {
				live = append(live, putAll(t, l, []Record{{Type: TypeProgress, CallID: string(rune('a' + i%2)), Chunk: c}})...)
			}
			l.Close()
			var persisted, seen []string
			recs, err := ReadFile(l.Path())
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs[1:] {
				persisted = append(persisted, r.Chunk)
			}
			for _, r := range live {
				seen = append(seen, r.Chunk)
			}
			if !cmp.Equal(persisted, tt.want, cmpopts.EquateEmpty()) {
				t.Errorf("persisted %q, want %q", persisted, tt.want)
			}
			if !cmp.Equal(seen, tt.chunks) {
				t.Errorf("live saw %q, want every chunk %q", seen, tt.chunks)
			}
		})
	}
}

func TestConcurrentAppends(t *testing.T) {
	const writers, each = 8, 200
	l := create(t, t.TempDir(), "s1", Options{})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				r := Record{Type: TypeProgress, CallID: fmt.Sprint("w", w), Chunk: fmt.Sprintf("%d %s\n", i, strings.Repeat("x", i))}
				if i%20 == 19 { // synced in the background, while the others write
					res := tool.Text("done")
					r = Record{Type: TypeToolResult, CallID: fmt.Sprint("r", w, "-", i), Result: &res}
				}
				if err := l.Append(r); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadFile(l.Path()) // fails on any interleaved line
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+writers*each {
		t.Fatalf("file has %d records, want %d", len(recs), 1+writers*each)
	}
	next := map[string]int{}
	for _, r := range recs[1:] {
		if r.Type == TypeToolResult {
			next["w"+strings.TrimPrefix(strings.Split(r.CallID, "-")[0], "r")]++
			continue
		}
		want := fmt.Sprintf("%d %s\n", next[r.CallID], strings.Repeat("x", next[r.CallID]))
		if r.Chunk != want {
			t.Fatalf("writer %s: chunk %q, want %q (lost or reordered)", r.CallID, r.Chunk, want)
		}
		next[r.CallID]++
	}
}

func TestCreateRefusesExistingAndInvalid(t *testing.T) {
	dir := t.TempDir()
	create(t, dir, "s1", Options{})
	if _, err := Create(dir, "s1", "/", Options{}); err == nil {
		t.Error("Create over an existing session succeeded")
	}
	if _, err := Create(dir, "../s2", "/", Options{}); err == nil || !strings.Contains(err.Error(), "invalid session id") {
		t.Errorf("Create(../s2) = %v, want invalid id", err)
	}
}

func TestCreateMakesPrivateDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	l := create(t, dir, "s1", Options{})
	fi, err := os.Stat(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("log mode %v, want 0600", fi.Mode().Perm())
	}
	if l.Path() != filepath.Join(dir, "s1.jsonl") {
		t.Errorf("Path() = %s", l.Path())
	}
}

func TestSecondWriterRefused(t *testing.T) {
	l := create(t, t.TempDir(), "s1", Options{})
	_, err := Open(l.Path(), Options{}, nil)
	if err == nil || !strings.Contains(err.Error(), "open in another dsh process") {
		t.Fatalf("Open of a session being written = %v, want refused", err)
	}
	// The refusal names who holds it (here this process), where /proc can tell.
	if runtime.GOOS == "linux" && !strings.Contains(err.Error(), fmt.Sprintf("(pid %d, `", os.Getpid())) {
		t.Errorf("the refusal should name the process that holds the session: %v", err)
	}
	l.Close()
	l2, err := Open(l.Path(), Options{}, nil)
	if err != nil {
		t.Fatalf("Open after the writer closed: %v", err)
	}
	l2.Close()
}

// A command started while a log is open holds a copy of its descriptor until
// it execs; a log closed and opened again meanwhile (a fork opens the copy it
// has just written) is still locked for that moment, by nobody for long. Here
// a child holds the copy for 30 ms.
func TestLockHeldByAStartingCommandWaited(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock")
	}
	l := create(t, t.TempDir(), "s1", Options{})
	child := exec.Command("sleep", "0.03")
	child.ExtraFiles = []*os.File{l.f}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = child.Wait() }()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2, err := Open(l.Path(), Options{}, nil)
	if err != nil {
		t.Fatalf("Open while a child held the closed log's descriptor: %v", err)
	}
	_ = l2.Close()
}

// records reads back what a log holds.
func records(t *testing.T, l *Log) []Record {
	t.Helper()
	recs, err := ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// putAll puts records and returns them as Put returned them.
func putAll(t *testing.T, l *Log, recs []Record) []Record {
	t.Helper()
	var out []Record
	for _, r := range recs {
		rec, err := l.Put(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
	return out
}
