package host

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dsh-dev/dsh/internal/provider/script"
)

// BenchmarkCheckpoints is a prompt with one write call, or one command, on a
// tree of 4 000 files, with checkpoints on and off (git not on PATH). Back to
// back, the snapshots taken in the background after one prompt run beside the
// next; paced, the next prompt starts once they are done, as when a user
// types it (the pause is not timed). walks/op is the walks of the tree per
// prompt.
//
//	go test -run - -bench Checkpoints ./internal/host/
func BenchmarkCheckpoints(b *testing.B) {
	root := b.TempDir()
	for d := range 40 {
		for f := range 100 {
			put(&testing.T{}, root, fmt.Sprintf("d%d/f%d.txt", d, f), fmt.Sprintf("file %d of %d\n", f, d))
		}
	}
	nogit := b.TempDir()
	for _, name := range []string{"bash", "sh"} {
		p, err := exec.LookPath(name)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(nogit, name)); err != nil {
			b.Fatal(err)
		}
	}
	const most = 5000 // prompts a run may make
	for _, kind := range []string{"write", "write-paced", "command"} {
		paced := kind == "write-paced"
		for _, on := range []bool{true, false} {
			name := kind + "/off"
			if on {
				name = kind + "/on"
			}
			b.Run(name, func(b *testing.B) {
				if !on {
					b.Setenv("PATH", nogit)
				}
				var turns []script.Turn
				for i := range most {
					c := script.ToolCall{ID: fmt.Sprint("c", i), Name: "write", Args: fmt.Appendf(nil, `{"path": "new/%s-%d.txt", "content": "new\n"}`, name[len(kind)+1:], i)}
					if kind == "command" {
						c = script.ToolCall{ID: fmt.Sprint("c", i), Name: "bash", Args: fmt.Appendf(nil, `{"command": "echo new > cmd-%s-%d.txt"}`, name[len(kind)+1:], i)}
					}
					turns = append(turns, script.Turn{ToolCalls: []script.ToolCall{c}}, script.Turn{Text: "ok"})
				}
				js, _ := json.Marshal(map[string]any{"turns": turns})
				sp, err := script.Parse(js)
				if err != nil {
					b.Fatal(err)
				}
				s, err := Create(options(&testing.T{}, root, b.TempDir(), &taped{Provider: sp}))
				if err != nil {
					b.Fatal(err)
				}
				defer func() { _ = s.Close() }()
				if _, err := s.Prompt(b.Context(), "warm up"); err != nil {
					b.Fatal(err)
				}
				s.settle(b.Context())
				var first int64
				if on {
					first = walks(&testing.T{}, s)
				}
				n := 0
				for b.Loop() {
					if n++; n >= most {
						b.Fatal("the script ran out")
					}
					if _, err := s.Prompt(b.Context(), "go"); err != nil {
						b.Fatal(err)
					}
					if paced {
						b.StopTimer()
						s.settle(b.Context())
						b.StartTimer()
					}
				}
				s.settle(b.Context())
				if on {
					b.ReportMetric(float64(walks(&testing.T{}, s)-first)/float64(n), "walks/op")
				}
			})
		}
	}
}
