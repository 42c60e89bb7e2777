package bash

import (
	"context"
	"fmt"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/netproxy"
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
	domains := netproxy.New(netproxy.Rules{Allow: [][]string{{"example.com"}}}, func(string) string { return "" })
	for _, c := range []struct {
		name string
		o    Options
	}{
		{"sandbox=off", Options{Sandbox: sandbox.Off}},
		{"sandbox=on", Options{Sandbox: sandbox.On}},
		// A network namespace and the proxy's listener for each command.
		{"sandbox=on,domains", Options{Sandbox: sandbox.On, Network: domains}},
	} {
		b.Run(c.name, func(b *testing.B) {
			if err := sandbox.Check(c.o.Sandbox); err != nil {
				b.Skip(err)
			}
			reg := tool.NewRegistry(Tools(c.o)...)
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
