package workspace

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func put(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func replaceWith(f File, s string) error {
	_, err := f.Replace(func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	})
	return err
}

// Links are followed as the kernel follows them: a link's target is read in the
// directory the link really is in, after that directory's own links.
func TestLocateFollowsLinksAsTheKernelDoes(t *testing.T) {
	root, outside := layout(t)
	if err := os.MkdirAll(filepath.Join(root, "d1", "d2"), 0o755); err != nil {
		t.Fatal(err)
	}
	symlink(t, "d1/d2", filepath.Join(root, "a"))
	symlink(t, "../../f", filepath.Join(root, "d1", "d2", "link"))           // root/f
	symlink(t, "../../../outside/x", filepath.Join(root, "d1", "d2", "out")) // leaves
	symlink(t, filepath.Join(root, "sub", "b.txt"), filepath.Join(root, "abs-inside"))
	symlink(t, "a/link", filepath.Join(root, "chain"))
	ws, err := New(root, false)
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"a/link":     filepath.Join(root, "f"),
		"chain":      filepath.Join(root, "f"),
		"abs-inside": filepath.Join(root, "sub", "b.txt"),
		"a/new.txt":  filepath.Join(root, "d1", "d2", "new.txt"),
		"a/../a.txt": filepath.Join(root, "a.txt"), // the path as written is cleaned first
	} {
		f, err := ws.Locate(in)
		if err != nil || f.Real() != want {
			t.Errorf("Locate(%q).Real() = %q, %v; want %q", in, f.Real(), err, want)
		}
	}
	for _, in := range []string{"a/out", "a/out/deeper"} {
		if _, err := ws.Locate(in); !errors.Is(err, ErrOutside) || !strings.Contains(err.Error(), outside) {
			t.Errorf("Locate(%q): %v", in, err)
		}
	}
	// The user may allow it: then the chain is followed out.
	open, err := New(root, true)
	if err != nil {
		t.Fatal(err)
	}
	if f, err := open.Locate("a/out"); err != nil || f.Real() != filepath.Join(outside, "x") {
		t.Fatalf("allowOutside: %q, %v", f.Real(), err)
	}
}

// tmpfsDir is a fresh directory on a RAM file system when there is one: the race
// test makes thousands of synced writes, which tmpfs makes cheap.
func tmpfsDir(t testing.TB) string {
	t.Helper()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "dsh-race-"); err == nil {
			t.Cleanup(func() { _ = os.RemoveAll(d) })
			return d
		}
	}
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A directory is swapped for a symlink to an outside directory in a loop while
// writes and reads run through it: nothing lands outside, nothing is read from
// outside, in 10 000 attempts.
func TestSwappedDirectoryNeverLeadsOutside(t *testing.T) {
	const attempts = 10000
	base := tmpfsDir(t)
	root, out := filepath.Join(base, "ws"), filepath.Join(base, "out")
	put(t, filepath.Join(root, "d", "keep"), "inside\n")
	put(t, filepath.Join(out, "secret"), "SECRET\n")
	ws, err := New(root, false)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()

	stop := make(chan struct{})
	var swaps atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		d, real := filepath.Join(root, "d"), filepath.Join(root, "d.real")
		targets := []string{out, "../out", "d.real/../../out"}
		// restore makes d a directory again: a write may have created a new d
		// while the real one was moved aside.
		restore := func() {
			if fi, err := os.Lstat(d); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				_ = os.Remove(d)
			}
			if _, err := os.Lstat(real); err == nil {
				_ = os.RemoveAll(d)
				_ = os.Rename(real, d)
			}
		}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			restore()
			if os.Rename(d, real) != nil {
				continue
			}
			if os.Symlink(targets[i%len(targets)], d) == nil {
				swaps.Add(1)
				runtime.Gosched()
			}
		}
	})
	// An attempt is a write whose path was located inside: the check passed,
	// and the write then races the swap.
	var attempted, wrote, read, leaked atomic.Int64
	var writers sync.WaitGroup
	for w := range 2 {
		writers.Go(func() {
			for i := 0; attempted.Load() < attempts; i++ {
				if i%4 == 0 {
					f, err := ws.Locate("d/secret")
					if err != nil {
						continue
					}
					if fh, err := f.Open(); err == nil {
						b, _ := io.ReadAll(fh)
						_ = fh.Close()
						read.Add(1)
						if string(b) == "SECRET\n" {
							leaked.Add(1)
						}
					}
					continue
				}
				f, err := ws.Locate("d/w" + strconv.Itoa(w) + "-" + strconv.Itoa(i%16))
				if err != nil {
					continue
				}
				attempted.Add(1)
				if replaceWith(f, "x") == nil {
					wrote.Add(1)
				}
			}
		})
	}
	writers.Wait()
	close(stop)
	wg.Wait()

	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || leaked.Load() != 0 {
		names := []string{}
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("%d files landed outside (%v), %d reads saw the outside secret", len(entries)-1, names, leaked.Load())
	}
	t.Logf("%d attempts: %d writes landed inside, %d reads, %d swaps", attempted.Load(), wrote.Load(), read.Load(), swaps.Load())
	if wrote.Load() == 0 || swaps.Load() == 0 {
		t.Fatal("the race did not run: no write succeeded or no swap happened")
	}
}

// With --allow-outside every path is reachable, writes included.
func TestAllowOutsideWrites(t *testing.T) {
	root, outside := layout(t)
	symlink(t, outside, filepath.Join(root, "out"))
	ws, err := New(root, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(outside, "a.txt"), "out/b.txt", "../outside/c.txt"} {
		f, err := ws.Locate(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := replaceWith(f, "x"); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	if got := names(t, outside); strings.Join(got, " ") != "a.txt b.txt c.txt secret.txt" {
		t.Fatalf("outside holds %v", got)
	}
}
