package termfold

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/termui"
	"github.com/dsh-dev/dsh/internal/toolset"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Records is a session with a record of every type, read from
// testdata/records.jsonl, plus a damaged line as lenient readers hand it out.
// The chat's and dsh replay's tests read the same file and compare their
// output with testdata/records.golden: that is how they prove they share this
// fold.
func records(t *testing.T) []session.Record {
	t.Helper()
	var recs []session.Record
	if err := session.Scan("testdata/records.jsonl", func(r session.Record) error {
		recs = append(recs, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return append(recs, session.Record{Type: session.TypeDamaged, Error: "line 19: not JSON"})
}

// TestGolden folds every record type (progress left out, as replay and the
// chat's scrollback leave it out) at 80 columns without colour.
func TestGolden(t *testing.T) {
	var b bytes.Buffer
	r := termui.New(&b, termui.Options{Width: 80})
	f := New(toolset.New(toolset.Options{}), func(err error) { t.Error(err) })
	seen := map[session.RecordType]bool{}
	for _, rec := range records(t) {
		seen[rec.Type] = true
		if rec.Type == session.TypeProgress {
			continue
		}
		if err := f.Record(r, rec); err != nil {
			t.Fatal(err)
		}
	}
	for _, typ := range []session.RecordType{session.TypeHeader, session.TypeUser, session.TypeAssistant, session.TypeThinking,
		session.TypeToolCall, session.TypeProgress, session.TypeToolResult, session.TypePlan, session.TypeTurnEnd, session.TypeMode,
		session.TypeAllow, session.TypeCompaction, session.TypeInstructions, session.TypeModel, session.TypeDamaged} {
		if !seen[typ] {
			t.Errorf("testdata/records.jsonl has no %s record", typ)
		}
	}
	const path = "testdata/records.golden"
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("the fold differs from %s (run with -update after checking):\n%s", path, b.String())
	}
}

func TestCallTitle(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"ls", "ls"},
		{"echo a\necho b", "echo a …"},
		{"echo a\n", "echo a"},
	} {
		if got := CallTitle(&card.GenericCall{Title: tc.in}); got != tc.want {
			t.Errorf("CallTitle(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	long := strings.Repeat("x", 100)
	if got := CallTitle(&card.TerminalCall{Title: long}); len([]rune(got)) != maxTitle || !strings.HasPrefix(got, "$ x") {
		t.Errorf("a long command's title is %q", got)
	}
}
