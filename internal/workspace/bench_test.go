package workspace

import (
	"path/filepath"
	"testing"
)

// BenchmarkReplace is one confined atomic write of a small file on tmpfs (when
// there is one): locate, temporary file, sync, rename.
func BenchmarkReplace(b *testing.B) {
	base := tmpfsDir(b)
	root := filepath.Join(base, "ws")
	put(b, filepath.Join(root, "d", "f"), "x")
	ws, err := New(root, false)
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	for b.Loop() {
		f, err := ws.Locate("d/f")
		if err != nil {
			b.Fatal(err)
		}
		if err := replaceWith(f, "y"); err != nil {
			b.Fatal(err)
		}
	}
}
