package bash

import (
	"context"
	"fmt"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// BenchmarkOutput measures how fast the bash tool takes in a command's output,
// with and without a live listener.
func BenchmarkOutput(b *testing.B) {
	const size = 256 << 20
	ws, err := workspace.New(b.TempDir(), false)
	if err != nil {
		b.Fatal(err)
	}
	reg := tool.NewRegistry(Tools()...)
	args, _ := json.Marshal(map[string]any{"command": fmt.Sprintf("head -c %d /dev/zero", size)})
	for _, live := range []bool{false, true} {
		b.Run(fmt.Sprintf("live=%v", live), func(b *testing.B) {
			sess := tool.NewSession("bench", ws)
			defer sess.Close()
			env := tool.Env{Session: sess}
			var emitted int
			if live {
				env.Progress = func(s string) { emitted += len(s) }
			}
			b.SetBytes(size)
			for b.Loop() {
				if r := res(reg.Run(context.Background(), env, "bash", args, nil)); r.IsError {
					b.Fatal(r.TextOf())
				}
			}
		})
	}
}
