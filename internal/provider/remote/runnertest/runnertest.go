// Package runnertest builds the model runner for the tests of packages that
// reach a vendor's provider (against a loopback server), and points dsh at
// it, as an installed dsh finds it beside itself.
package runnertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dsh-dev/dsh/internal/provider/remote"
)

// Main builds cmd/dsh-model, sets remote.RunnerEnv to it, and runs m.
func Main(m *testing.M) int {
	dir, err := os.MkdirTemp("", "dsh-model-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	bin, err := Build(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.Setenv(remote.RunnerEnv, bin); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// Build builds cmd/dsh-model into dir, where a dsh built there finds it, and
// returns its path.
func Build(dir string) (string, error) {
	bin := filepath.Join(dir, "dsh-model")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/dsh-dev/dsh/cmd/dsh-model").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build dsh-model: %w\n%s", err, out)
	}
	return bin, nil
}
