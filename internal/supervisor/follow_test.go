package supervisor

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// outputPipe is a command's output pipe as Follow wants it: the read end
// non-blocking and not polled by the runtime.
func outputPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(p[0]), "r"), os.NewFile(uintptr(p[1]), "w")
	if err := syscall.SetNonblock(p[0], true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r, w
}

// TestFollow: Follow gives the whole output and the exit; with Handoff the
// output's write end is the supervisor's once the command has started; a
// session's next command follows on the same supervisor.
func TestFollow(t *testing.T) {
	for name, start := range starts(t) {
		t.Run(name, func(t *testing.T) {
			for i := range 2 {
				r, w := outputPipe(t)
				p, err := start(Spec{Path: "/bin/sh", Args: []string{"sh", "-c", "echo out; sleep 0.05; echo more >&2; exit 3"},
					Env: os.Environ(), Output: w, Grace: time.Second, Drain: 100 * time.Millisecond, Handoff: true})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := w.Write([]byte("x")); !errors.Is(err, os.ErrClosed) {
					t.Errorf("command %d: the write end is still open after the start (%v)", i, err)
				}
				var out strings.Builder
				e := p.Follow(r, &out, make([]byte, 3))
				if got := out.String(); got != "out\nmore\n" {
					t.Errorf("command %d: output %q", i, got)
				}
				if got := statusString(e.Status); got != "exit status 3" || e.Leftovers {
					t.Errorf("command %d: %s, leftovers %v; want exit status 3", i, got, e.Leftovers)
				}
			}
		})
	}
}

// TestFollowOutOfReach: a process out of the supervisor's reach (here: this
// test) that holds the output pipe, quiet or writing on, is not waited for;
// what the command wrote is all there.
func TestFollowOutOfReach(t *testing.T) {
	for name, start := range starts(t) {
		for _, flood := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/flood=%v", name, flood), func(t *testing.T) {
				r, w := outputPipe(t)
				stopped := make(chan struct{})
				if flood {
					go func() {
						defer close(stopped)
						x := []byte(strings.Repeat("x", 4096))
						for {
							if _, err := w.Write(x); err != nil {
								return // r is closed
							}
						}
					}()
				} else {
					close(stopped)
				}
				p, err := start(Spec{Path: "/bin/sh", Args: []string{"sh", "-c", "echo out; echo more"}, Env: os.Environ(), Output: w,
					Grace: time.Second, Drain: 100 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				var out strings.Builder
				e := p.Follow(r, &out, make([]byte, 64<<10))
				if got := strings.ReplaceAll(out.String(), "x", ""); got != "out\nmore\n" {
					t.Errorf("output %q", got)
				}
				if got := statusString(e.Status); got != "exit status 0" {
					t.Errorf("%s, want exit status 0", got)
				}
				_ = r.Close()
				<-stopped
				_ = w.Close()
			})
		}
	}
}

// starts are Start and a session's.
func starts(t *testing.T) map[string]func(Spec) (*Process, error) {
	s := new(Session)
	t.Cleanup(s.Close)
	return map[string]func(Spec) (*Process, error){"own": Start, "session": s.Start}
}
