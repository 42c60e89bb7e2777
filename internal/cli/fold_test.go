package cli

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/termui"
	"github.com/dsh-dev/dsh/internal/toolset"
	"github.com/dsh-dev/dsh/internal/view"
)

var update = flag.Bool("update", false, "rewrite golden files")

// foldRecords are the records of every type the terminal fold's golden test
// reads, and a damaged line.
func foldRecords(t *testing.T) []session.Record {
	t.Helper()
	var recs []session.Record
	if err := session.Scan("../termfold/testdata/records.jsonl", func(r session.Record) error {
		recs = append(recs, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return append(recs, session.Record{Type: session.TypeDamaged, Error: "line 19: not JSON"})
}

// TestReplayIsTheTerminalFold: dsh replay (and dsh run) print a session's
// records as the chat does — the golden file is the one fold's.
func TestReplayIsTheTerminalFold(t *testing.T) {
	var b bytes.Buffer
	tc := newTermConsumer(&b, toolset.New(toolset.Options{}), termui.Options{Width: 80}, func(err error) { t.Error(err) })
	for _, r := range foldRecords(t) {
		if r.Type == session.TypeProgress { // as runReplay does
			continue
		}
		if err := tc.handle(r); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("../termfold/testdata/records.golden")
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("dsh replay differs from the terminal fold's golden file:\n%s", b.String())
	}
}

// TestJSONLines: dsh replay --json and dsh run --output stream-json print each
// record as the log holds it (args, preview, model, content, …) with its cards;
// testdata/records-json.golden has a line per record type.
func TestJSONLines(t *testing.T) {
	var b bytes.Buffer
	j := &jsonConsumer{w: &b, pres: view.NewPresenter(toolset.New(toolset.Options{}))}
	for _, r := range foldRecords(t) {
		if err := j.handle(r); err != nil {
			t.Fatal(err)
		}
	}
	const path = "testdata/records-json.golden"
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("JSON lines differ from %s (run with -update after checking):\n%s", path, b.String())
	}
}
