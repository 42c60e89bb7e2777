package rpcfix

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A replay's output goes through a pipe of a megabyte, when the kernel allows it.
func TestOutputPipeGrown(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/fs/pipe-max-size")
	if err != nil {
		t.Skip(err)
	}
	if limit, _ := strconv.Atoi(strings.TrimSpace(string(b))); limit < pipeSize {
		t.Skipf("pipe-max-size is %d", limit)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close(); _ = w.Close() }()
	New(strings.NewReader(""), w, nil)
	if n, err := unix.FcntlInt(w.Fd(), unix.F_GETPIPE_SZ, 0); err != nil || n < pipeSize {
		t.Errorf("pipe size %d (%v), want %d", n, err, pipeSize)
	}
}
