package session

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestRemove: a log its writer holds open is not removed; once closed it is,
// and a missing one is an error that says so.
func TestRemove(t *testing.T) {
	dir := t.TempDir()
	l, err := Create(dir, "s1", "/", Options{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "s1.jsonl")
	if err := Remove(path); err == nil || !errors.Is(err, errLocked) {
		t.Errorf("Remove of a live log: %v, want it refused", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the refused remove removed it: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Remove(path); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the log is still there: %v", err)
	}
	if err := Remove(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Remove of a missing log: %v", err)
	}
}
