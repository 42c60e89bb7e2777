package chat

import (
	"os"
	"testing"

	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/termui"
	"github.com/dsh-dev/dsh/internal/toolset"
)

// TestScrollbackIsTheTerminalFold: the chat prints a session's records as dsh
// replay does — the golden file is the one fold's (internal/termfold).
func TestScrollbackIsTheTerminalFold(t *testing.T) {
	const dir = "../termfold/testdata/"
	sb := newScrollback(toolset.New(toolset.Options{}), termui.Options{Width: 80}, func(s string) { t.Error(s) })
	if err := session.Scan(dir+"records.jsonl", func(r session.Record) error {
		sb.record(r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sb.record(session.Record{Type: session.TypeDamaged, Error: "line 19: not JSON"})
	want, err := os.ReadFile(dir + "records.golden")
	if err != nil {
		t.Fatal(err)
	}
	if got := sb.take() + "\n"; got != string(want) {
		t.Errorf("the chat's scrollback differs from the terminal fold's golden file:\n%s", got)
	}
}
