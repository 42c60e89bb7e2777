package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// tiocstiAttack is the job's attacker (DSH_TEST_TIOCSTI=line): it pushes line
// into the input of the terminal behind /dev/tty and behind each of its own
// descriptors, writes a title to /dev/tty, and prints what happened.
func tiocstiAttack(line string) {
	result := func(what string, err error) {
		if err != nil {
			fmt.Printf("%s: refused (%v)\n", what, err)
		} else {
			fmt.Printf("%s: done\n", what)
		}
	}
	fds := []int{0, 1, 2}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	result("open /dev/tty", err)
	if err == nil {
		fds = append(fds, int(tty.Fd()))
		_, err = tty.WriteString("\x1b]0;PWNED-TITLE\x07")
		result("write /dev/tty", err)
	}
	for _, fd := range fds {
		var err error
		for i := range len(line) {
			b := line[i]
			if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCSTI, uintptr(unsafe.Pointer(&b))); e != 0 {
				err = e
				break
			}
		}
		result("TIOCSTI on fd "+strconv.Itoa(fd), err)
	}
}

// TestJobCannotTypeIntoTheTerminal: dsh runs on a terminal, waiting for its
// next input line (the prompt is open); a background job pushes a tool call
// into that terminal with TIOCSTI and writes to /dev/tty. Nothing arrives: the
// command has no controlling terminal, and no descriptor of it; with the
// sandbox on, too.
func TestJobCannotTypeIntoTheTerminal(t *testing.T) {
	exe := dsh(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"off", "on"} {
		t.Run("sandbox="+mode, func(t *testing.T) {
			ws := t.TempDir()
			pwned := filepath.Join(ws, "PWNED")
			injected := fmt.Sprintf(`{"name":"bash","args":{"command":"touch %s"}}`+"\n", pwned)
			ptmx, tty, err := pty.Open()
			if err != nil {
				t.Fatal(err)
			}
			defer ptmx.Close()
			cmd := exec.Command(exe, "tool", "--json", "--sandbox", mode, "-")
			cmd.Dir = ws
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
			cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			_ = tty.Close()
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			// Raw mode, so that each line arrives as typed and nothing echoes
			// back a title we would take for the job's.
			if _, err := pty.GetsizeFull(ptmx); err != nil {
				t.Fatal(err)
			}
			if err := setRaw(ptmx); err != nil {
				t.Fatal(err)
			}
			out := make(chan string, 100)
			go func() {
				sc := bufio.NewScanner(ptmx)
				sc.Buffer(make([]byte, 1<<20), 1<<20)
				for sc.Scan() {
					out <- sc.Text()
				}
				close(out)
			}()
			send := func(line string) string {
				if _, err := ptmx.WriteString(line + "\n"); err != nil {
					t.Fatal(err)
				}
				for {
					select {
					case l, ok := <-out:
						if !ok {
							t.Fatal("dsh ended")
						}
						if strings.HasPrefix(l, `{"call"`) {
							return l
						}
					case <-time.After(60 * time.Second):
						t.Fatal("no answer from dsh")
					}
				}
			}
			job := fmt.Sprintf("sleep 0.5; DSH_TEST_TIOCSTI=%s %s", strconv.Quote(injected), self)
			send(fmt.Sprintf(`{"name":"bash","args":{"command":%s,"run_in_background":true}}`, strconv.Quote(job)))
			// The prompt is open: dsh waits for a line on its terminal.
			time.Sleep(2 * time.Second)
			r := send(`{"name":"job_output","args":{"job_id":"job-1","wait_ms":20000}}`)
			for _, want := range []string{"open /dev/tty: refused", "TIOCSTI on fd 0: refused", "TIOCSTI on fd 1: refused", "TIOCSTI on fd 2: refused"} {
				if !strings.Contains(r, want) {
					t.Errorf("the job's output lacks %q: %s", want, r)
				}
			}
			send(`{"name":"bash","args":{"command":"true"}}`) // anything injected would have run by now
			if _, err := os.Stat(pwned); err == nil {
				t.Error("the job typed a tool call into dsh's terminal")
			}
			for {
				select {
				case l := <-out:
					if strings.Contains(l, "PWNED-TITLE") && !strings.Contains(l, `{"call"`) {
						t.Errorf("the job wrote to the terminal: %q", l)
					}
					continue
				default:
				}
				break
			}
		})
	}
}

func setRaw(f *os.File) error {
	tio, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	if err != nil {
		return err
	}
	tio.Lflag &^= unix.ECHO | unix.ICANON
	return unix.IoctlSetTermios(int(f.Fd()), unix.TCSETS, tio)
}
