package bash

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
)

// TestOutputHeldOutOfReach: a command's output pipe held open by a process
// the supervisor cannot reach (here this test, which opens the shell's
// stdout through /proc) does not keep the call from ending once the command
// has: the read stops when the supervisor says so, and what came
// before is kept. Without the holder, the call ends with the command.
func TestOutputHeldOutOfReach(t *testing.T) {
	for _, held := range []bool{false, true} {
		t.Run(fmt.Sprintf("held=%v", held), func(t *testing.T) {
			f := newFixture(t)
			var once sync.Once
			env := f.env()
			env.Progress = func(s string) {
				pid, err := strconv.Atoi(strings.SplitN(s, "\n", 2)[0])
				if !held || err != nil {
					return
				}
				once.Do(func() {
					h, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/1", pid), os.O_WRONLY, 0)
					if err != nil {
						t.Errorf("holding the output: %v", err)
						return
					}
					t.Cleanup(func() { _ = h.Close() })
				})
			}
			args, _ := json.Marshal(map[string]any{"command": "echo $$; sleep 0.2; echo done"})
			ended := make(chan struct{})
			go func() {
				defer close(ended)
				r := res(f.reg.Run(context.Background(), env, "bash", args, nil))
				if r.IsError {
					t.Errorf("error: %s", r.TextOf())
				}
				mustContain(t, r.TextOf(), "done")
			}()
			select {
			case <-ended:
			case <-time.After(time.Minute): // a guard against a hang, not a measure
				t.Fatal("the call did not end after its command did")
			}
		})
	}
}
