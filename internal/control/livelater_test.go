package control

import (
	"errors"
	"os"
	"testing"

	"github.com/dsh-dev/dsh/internal/host"
)

// A session created with LiveLater is not offered until GoLive: a client
// that comes first is told it is not live, one after joins it; GoLive again
// changes nothing, and after Close it leaves no socket behind.
func TestLiveLater(t *testing.T) {
	for _, closeFirst := range []bool{false, true} {
		root, dir := t.TempDir(), t.TempDir()
		s, err := host.Create(host.Options{SessionDir: dir, Root: root, LiveLater: true,
			Warn: func(s string) { t.Error(s) }, Live: Serve})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DialSession(t.Context(), dir, s.ID(), DialOptions{}); !errors.Is(err, ErrNotLive) {
			t.Fatalf("dialled before GoLive: %v, want ErrNotLive", err)
		}
		if live, err := Attachable(dir); err != nil || len(live) != 0 {
			t.Fatalf("attachable before GoLive: %v (%v)", live, err)
		}
		if closeFirst {
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s.GoLive()
			if _, err := os.Lstat(Path(dir, s.ID())); !os.IsNotExist(err) {
				t.Errorf("socket of a closed session: %v, want none", err)
			}
			continue
		}
		s.GoLive()
		s.GoLive() // a second socket would warn: another process offers it
		c := dial(t, dir, s.ID(), "web")
		if c.ID() != s.ID() {
			t.Errorf("joined %q, want %q", c.ID(), s.ID())
		}
		_ = c.Close()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(Path(dir, s.ID())); !os.IsNotExist(err) {
			t.Errorf("socket after close: %v, want it gone", err)
		}
	}
}
