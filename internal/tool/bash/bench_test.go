package bash

import (
	"context"
	"fmt"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/sandbox"
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

// BenchmarkCommand measures one short foreground command end to end: the
// supervisor's start (this test binary re-executed) and bash; with the sandbox,
// the Landlock ruleset too.
func BenchmarkCommand(b *testing.B) {
	ws, err := workspace.New(b.TempDir(), false)
	if err != nil {
		b.Fatal(err)
	}
	args, _ := json.Marshal(map[string]any{"command": "true"})
	for _, mode := range []sandbox.Mode{sandbox.Off, sandbox.On} {
		b.Run("sandbox="+string(mode), func(b *testing.B) {
			if err := sandbox.Check(mode); err != nil {
				b.Skip(err)
			}
			reg := tool.NewRegistry(Tools(Options{Sandbox: mode})...)
			sess := tool.NewSession("bench", ws)
			defer sess.Close()
			for b.Loop() {
				if r := res(reg.Run(context.Background(), tool.Env{Session: sess}, "bash", args, nil)); r.IsError {
					b.Fatal(r.TextOf())
				}
			}
		})
	}
}
