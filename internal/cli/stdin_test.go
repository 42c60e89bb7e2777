package cli

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestPollableStdin(t *testing.T) {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, w := os.NewFile(uintptr(p[0]), "r"), os.NewFile(uintptr(p[1]), "w")
	defer func() { _ = r.Close(); _ = w.Close() }()
	if err := r.SetReadDeadline(time.Now()); !errors.Is(err, os.ErrNoDeadline) {
		t.Fatalf("a blocking pipe takes a deadline (%v): the test proves nothing", err)
	}
	pr := pollable(r)
	defer func() { _ = pr.Close() }()
	if pr == r {
		t.Fatal("the pipe was not reopened")
	}
	// Read through the poller: a deadline ends a read that waits.
	if err := pr.SetReadDeadline(time.Now().Add(10 * time.Millisecond)); err != nil {
		t.Fatalf("not pollable: %v", err)
	}
	if _, err := pr.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read = %v, want the deadline", err)
	}
	_ = pr.SetReadDeadline(time.Time{})
	if _, err := w.WriteString("line\n"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := pr.Read(buf); err != nil || string(buf[:n]) != "line\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	// The caller's open file stays blocking: a shell that shares it is not
	// left with a non-blocking stdin.
	flags, err := fcntlFlags(r)
	if err != nil || flags&syscall.O_NONBLOCK != 0 {
		t.Fatalf("the shared pipe's flags = %#x, %v", flags, err)
	}

	f, err := os.CreateTemp(t.TempDir(), "in")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if pollable(f) != f {
		t.Fatal("a regular file was reopened")
	}
}

func fcntlFlags(f *os.File) (int, error) {
	v, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_GETFL, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(v), nil
}

// The lines of a polled stdin are read on the caller's goroutine; the end of
// the context must still end a read that waits.
func TestPolledLinesEndWithContext(t *testing.T) {
	r, w, err := os.Pipe() // read through the poller, as pollable makes stdin
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close(); _ = w.Close() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := w.WriteString("one\ntwo\n"); err != nil {
		t.Fatal(err)
	}
	var got []string
	done := make(chan error, 1)
	go func() {
		for line, err := range callLines(ctx, r) {
			if err != nil {
				done <- err
				return
			}
			got = append(got, string(line))
			if len(got) == 2 {
				cancel() // while the next read waits
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("ended with %v, want the context's end", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled context did not end the read")
	}
	if strings.Join(got, ",") != "one,two" {
		t.Fatalf("lines %q", got)
	}
}
