package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// exchange swaps two names at once, as a racing process would.
func exchange(t *testing.T, a, b string) {
	t.Helper()
	if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
		t.Fatal(err)
	}
}

// TestLend: a path with a link on the way is never lent; a path whose
// names change while it is lent (even swapped and swapped back, which leaves
// every name where it was) is reported moved; what an editor legitimately
// does to the file (write it in place, save it atomically after a write, create
// it) is not, nor is a change to another name beside it.
func TestLend(t *testing.T) {
	tests := []struct {
		name  string
		path  string // the file lent, relative to the root
		wrote bool
		// before runs before Lend, during while the path is lent; root is
		// the workspace, out a folder outside it.
		before, during func(t *testing.T, root, out string)
		lendErr        error // Lend's error, wrapped
		err            error // Return's error, wrapped
	}{
		{name: "untouched", path: "dir/f.txt"},
		{name: "written in place", path: "dir/f.txt", wrote: true, during: func(t *testing.T, root, _ string) {
			put(t, filepath.Join(root, "dir/f.txt"), "new")
		}},
		{name: "saved atomically", path: "dir/f.txt", wrote: true, during: func(t *testing.T, root, _ string) {
			put(t, filepath.Join(root, "dir/.f.tmp"), "new")
			if err := os.Rename(filepath.Join(root, "dir/.f.tmp"), filepath.Join(root, "dir/f.txt")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "created", path: "dir/new.txt", wrote: true, during: func(t *testing.T, root, _ string) {
			put(t, filepath.Join(root, "dir/new.txt"), "new")
		}},
		{name: "a name beside it", path: "dir/f.txt", during: func(t *testing.T, root, _ string) {
			put(t, filepath.Join(root, "dir/other.txt"), "x")
			put(t, filepath.Join(root, "other/f.txt"), "x")
		}},
		{name: "a folder moved moments ago", path: "dir/f.txt", lendErr: ErrUnsettled, before: func(t *testing.T, root, _ string) {
			// Its entries last changed long before (not in the
			// timestamps' last tick, as they would here).
			old := time.Now().Add(-time.Hour)
			if err := os.Chtimes(filepath.Join(root, "dir"), old, old); err != nil {
				t.Fatal(err)
			}
			for _, p := range [][2]string{{"dir", "dir2"}, {"dir2", "dir"}} {
				if err := os.Rename(filepath.Join(root, p[0]), filepath.Join(root, p[1])); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{name: "a folder filled moments ago", path: "dir/f.txt", before: func(t *testing.T, root, _ string) {
			put(t, filepath.Join(root, "dir/g.txt"), "x")
			if err := os.Rename(filepath.Join(root, "dir/g.txt"), filepath.Join(root, "dir/h.txt")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "the file moved moments ago", path: "dir/f.txt", lendErr: ErrUnsettled, before: func(t *testing.T, root, _ string) {
			old := time.Now().Add(-time.Hour)
			if err := os.Chtimes(filepath.Join(root, "dir/f.txt"), old, old); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "the file written moments ago", path: "dir/f.txt", before: func(t *testing.T, root, _ string) {
			put(t, filepath.Join(root, "dir/f.txt"), "new")
		}},
		{name: "a link on the way", path: "link/f.txt", lendErr: ErrLinked},
		{name: "a link at the end", path: "dir/secret", lendErr: ErrLinked},
		{name: "replaced while read", path: "dir/f.txt", err: ErrMoved, during: func(t *testing.T, root, _ string) {
			put(t, filepath.Join(root, "dir/.f.tmp"), "new")
			if err := os.Rename(filepath.Join(root, "dir/.f.tmp"), filepath.Join(root, "dir/f.txt")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "folder swapped and back", path: "dir/f.txt", err: ErrMoved, during: func(t *testing.T, root, out string) {
			exchange(t, filepath.Join(root, "dir"), filepath.Join(out, "link"))
			exchange(t, filepath.Join(root, "dir"), filepath.Join(out, "link"))
		}},
		{name: "file swapped and back", path: "dir/f.txt", wrote: true, err: ErrMoved, during: func(t *testing.T, root, out string) {
			exchange(t, filepath.Join(root, "dir/f.txt"), filepath.Join(out, "filelink"))
			exchange(t, filepath.Join(root, "dir/f.txt"), filepath.Join(out, "filelink"))
		}},
		{name: "file swapped", path: "dir/f.txt", wrote: true, err: ErrMoved, during: func(t *testing.T, root, out string) {
			exchange(t, filepath.Join(root, "dir/f.txt"), filepath.Join(out, "filelink"))
		}},
		{name: "root swapped and back", path: "dir/f.txt", err: ErrMoved, during: func(t *testing.T, root, out string) {
			exchange(t, root, filepath.Join(out, "link"))
			exchange(t, root, filepath.Join(out, "link"))
		}},
		{name: "folder removed", path: "dir/sub/f.txt", err: ErrMoved, during: func(t *testing.T, root, _ string) {
			if err := os.RemoveAll(filepath.Join(root, "dir/sub")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			root, out := filepath.Join(base, "ws"), filepath.Join(base, "out")
			put(t, filepath.Join(root, "dir/f.txt"), "old")
			put(t, filepath.Join(root, "dir/sub/f.txt"), "old")
			put(t, filepath.Join(out, "secret"), "secret")
			for _, l := range [][2]string{{out, filepath.Join(out, "link")}, {filepath.Join(out, "secret"), filepath.Join(out, "filelink")},
				{filepath.Join(root, "dir"), filepath.Join(root, "link")}, {filepath.Join(out, "secret"), filepath.Join(root, "dir/secret")}} {
				if err := os.Symlink(l[0], l[1]); err != nil {
					t.Fatal(err)
				}
			}
			w, err := New(root, false)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = w.Close() }()
			if tc.before != nil {
				tc.before(t, w.Root(), out)
			}
			f := File{w: w, abs: filepath.Join(w.Root(), tc.path), rel: tc.path}
			l, err := f.Lend()
			if !errors.Is(err, tc.lendErr) || (err != nil) != (tc.lendErr != nil) {
				t.Fatalf("Lend: %v, want %v", err, tc.lendErr)
			}
			if err != nil {
				return
			}
			defer l.Close()
			if tc.during != nil {
				tc.during(t, w.Root(), out)
			}
			if err := l.Return(tc.wrote); !errors.Is(err, tc.err) || (err != nil) != (tc.err != nil) {
				t.Fatalf("Return: %v, want %v", err, tc.err)
			}
		})
	}
}

// TestLoanRead reads what is at the lent path now, never through a link.
func TestLoanRead(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	put(t, filepath.Join(root, "dir/f.txt"), "content")
	put(t, filepath.Join(base, "secret"), "secret")
	w, err := New(root, false)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Close() }()
	f, err := w.Locate("dir/f.txt")
	if err != nil {
		t.Fatal(err)
	}
	l, err := f.Lend()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got, err := l.Read(100); err != nil || string(got) != "content" {
		t.Fatalf("Read = %q, %v", got, err)
	}
	if got, err := l.Read(3); err != nil || string(got) != "con" {
		t.Fatalf("Read(3) = %q, %v", got, err)
	}
	if err := os.Remove(filepath.Join(w.Root(), "dir/f.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "secret"), filepath.Join(w.Root(), "dir/f.txt")); err != nil {
		t.Fatal(err)
	}
	if got, err := l.Read(100); err == nil {
		t.Fatalf("Read followed the link: %q", got)
	}
}

// TestLendIsUnseen: lending a path opens nothing a watcher sees (a racer
// watching the tree with inotify could time its swap on dsh's checks).
func TestLendIsUnseen(t *testing.T) {
	root := t.TempDir()
	put(t, filepath.Join(root, "a/b/f.txt"), "x")
	w, err := New(root, false)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Close() }()
	f, err := w.Locate("a/b/f.txt") // os.Root opens the folders it walks
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unix.Close(fd) }()
	for _, d := range []string{"", "a", "a/b", "a/b/f.txt"} {
		if _, err := unix.InotifyAddWatch(fd, filepath.Join(w.Root(), d), unix.IN_ALL_EVENTS); err != nil {
			t.Fatal(err)
		}
	}
	l, err := f.Lend()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Return(false); err != nil {
		t.Fatal(err)
	}
	l.Close()
	buf := make([]byte, 4096)
	if n, err := unix.Read(fd, buf); !errors.Is(err, unix.EAGAIN) {
		for off := 0; off < n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			t.Errorf("a watcher saw event %#x on %d (%q)", ev.Mask, ev.Wd, buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)])
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
}
