package host

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// Load hands its replay every record, in order, whatever their sizes: small
// ones in batches, past the in-flight budget, and ones larger than the budget
// (which wait for all before them to be replayed) — none lost, none twice,
// and no hand-over left waiting on a batch not yet sent.
func TestLoadReplaysEveryRecordInOrder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sizes []int // bytes of each tool result's text
	}{
		{"none", nil},
		{"fewer than a batch", []int{10, 10, 10}},
		{"many small", repeat(500, 100)},
		{"past the budget", repeat(300, 16<<10)},
		{"larger than the budget", []int{10, maxInflight + 1, 10, 3 * maxInflight, 10}},
		{"mixed", append(append(repeat(150, 100), bigRecord+1), repeat(150, 20<<10)...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, dir := t.TempDir(), t.TempDir()
			id := session.NewID(time.Now())
			l, err := session.Create(dir, id, root, session.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for i, n := range tc.sizes {
				cid := fmt.Sprintf("c%d", i)
				res := tool.Result{Content: []card.Content{card.Text(strings.Repeat("x", n))}}
				for _, r := range []session.Record{{Type: session.TypeToolCall, CallID: cid, Name: "nosuchtool", Args: []byte(`{}`)},
					{Type: session.TypeToolResult, CallID: cid, Result: &res}} {
					if err := l.Append(r); err != nil {
						t.Fatal(err)
					}
					want = append(want, string(r.Type)+" "+cid)
				}
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			var got []string
			s, err := Load(options(t, root, dir, nil), filepath.Join(dir, id+".jsonl"), func(_ *Session, r session.Record) error {
				if r.Type == session.TypeToolCall || r.Type == session.TypeToolResult {
					got = append(got, string(r.Type)+" "+r.CallID)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("replayed %d records, want %d in log order:\ngot  %v\nwant %v", len(got), len(want), got, want)
			}
		})
	}
}

func repeat(n, size int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = size
	}
	return out
}
