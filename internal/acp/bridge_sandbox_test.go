package acp

import (
	"testing"

	"github.com/dsh-dev/dsh/internal/card"
)

// TestExitNoteSandbox: an editor learns that the sandbox refused something.
func TestExitNoteSandbox(t *testing.T) {
	for _, tc := range []struct {
		r    card.TerminalResult
		want string
	}{
		{card.TerminalResult{ExitCode: card.Ptr(0), Sandbox: &card.Sandbox{Network: true}}, ""},
		{card.TerminalResult{ExitCode: card.Ptr(1), Sandbox: &card.Sandbox{Refused: "bash: connect: Permission denied"}},
			"Exit code 1. Refused by the sandbox: bash: connect: Permission denied"},
		{card.TerminalResult{ExitCode: card.Ptr(1)}, "Exit code 1."},
	} {
		if got := exitNote(&tc.r); got != tc.want {
			t.Errorf("exitNote(%+v) = %q, want %q", tc.r, got, tc.want)
		}
	}
}
