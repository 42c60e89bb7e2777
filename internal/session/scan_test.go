package session

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScanMatchesReadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeBenchLog(t, path, 500)
	// A torn last line must be skipped by both.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"type":"user","te`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	want, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []Record
	if err := Scan(path, func(r Record) error { got = append(got, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Scan differs from ReadFile (-want +got):\n%s", diff)
	}
	empty := filepath.Join(t.TempDir(), "e.jsonl")
	os.WriteFile(empty, nil, 0o600)
	if err := Scan(empty, func(Record) error { return nil }); err == nil {
		t.Error("Scan of an empty log succeeded")
	}
}
