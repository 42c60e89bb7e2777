package checkpoint

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dsh-dev/dsh/internal/proctest"
)

// A git a walk runs dies with the process that ran it: killed with SIGKILL
// in the middle of a walk, dsh leaves no git writing its store.
func TestGitDiesWithDsh(t *testing.T) {
	if root := os.Getenv("DSH_TEST_WALK_ROOT"); root != "" {
		// The dsh being killed: it walks with a git that never ends.
		s, err := Open(filepath.Join(t.TempDir(), "store"), root, "s1", Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, _ = s.Snapshot(context.Background())
		return
	}
	mark := proctest.Marker()
	bin := t.TempDir()
	// `git init` ends; any other git is a walk that sleeps, as itself.
	script := "#!/bin/sh\nfor a; do [ \"$a\" = init ] && { mkdir -p \"$GIT_DIR\" && touch \"$GIT_DIR/HEAD\"; exit 0; }; done\nexec sleep " + mark + "\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	child := exec.Command(os.Args[0], "-test.run=^TestGitDiesWithDsh$")
	child.Env = append(os.Environ(), "DSH_TEST_WALK_ROOT="+t.TempDir(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	proctest.WaitRunning(t, mark, 1)
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	proctest.NoneRunning(t, mark)
}
