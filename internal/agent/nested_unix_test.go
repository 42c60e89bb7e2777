//go:build unix

package agent

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/tool/fs"
)

// An AGENTS.md that is a FIFO would block the turn forever if it were opened.
func TestNestedInstructionsFIFO(t *testing.T) {
	e := newEnv(t)
	write(t, filepath.Join(e.dir, "pipe", "f.go"), "package pipe\n")
	if err := syscall.Mkfifo(filepath.Join(e.dir, "pipe", "AGENTS.md"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	fp := &fakeProvider{turns: reads("pipe/f.go")}
	a := New(Config{Provider: fp, Registry: tool.NewRegistry(fs.Read()), Log: e.log, Tools: e.tools})
	if _, err := a.Prompt(t.Context(), "read"); err != nil {
		t.Fatal(err)
	}
	for _, r := range e.records(t) {
		if r.Type == session.TypeInstructions {
			t.Errorf("a FIFO was loaded as instructions: %+v", r)
		}
	}
}

// The root's instructions are refused, not waited for, when they are a FIFO.
func TestLoadInstructionsFIFO(t *testing.T) {
	root := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, "AGENTS.md"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if _, err := LoadInstructions(root); err == nil {
		t.Error("no error for a FIFO AGENTS.md")
	}
}
