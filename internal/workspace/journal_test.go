package workspace

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestJournalSweepsOnOpen: the directories a workspace wrote in are noted
// outside it, and the next one to open clears them of the temporary files
// that killed writes left — however fresh — but not of one a live write holds
// locked; the journal starts again empty.
func TestJournalSweepsOnOpen(t *testing.T) {
	root, state := t.TempDir(), t.TempDir()
	journal := filepath.Join(state, "sessions", ".writes")
	w, err := New(root, false)
	if err != nil {
		t.Fatal(err)
	}
	w.UseJournal(journal)
	f, err := w.Locate("sub/dir/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Replace(func(out io.Writer) error { _, err := io.WriteString(out, "new\n"); return err }); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	if b, err := os.ReadFile(journal); err != nil || strings.TrimSpace(string(b)) != "sub/dir" {
		t.Fatalf("the journal holds %q, %v; want the directory written in", b, err)
	}
	dir := filepath.Join(root, "sub", "dir")
	killed := filepath.Join(dir, ".a.txt.0123456789abcdef"+tempSuffix)
	live := filepath.Join(dir, ".a.txt.fedcba9876543210"+tempSuffix)
	for _, p := range []string{killed, live} {
		if err := os.WriteFile(p, []byte("half"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	lf, err := os.Open(live)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}

	w2, err := New(root, false)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	w2.UseJournal(journal)
	if _, err := os.Stat(killed); !os.IsNotExist(err) {
		t.Errorf("the killed write's temporary file is still there (%v)", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live write's temporary file was removed: %v", err)
	}
	if b, _ := os.ReadFile(journal); len(b) != 0 {
		t.Errorf("the journal was not emptied: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "new\n" {
		t.Errorf("a.txt = %q", b)
	}
}
