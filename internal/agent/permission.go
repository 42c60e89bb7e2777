package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// Mode decides which tool calls the agent asks the user about.
type Mode string

// The permission modes.
const (
	ModeDefault     Mode = "default"      // ask before changing files and running commands
	ModeAcceptEdits Mode = "accept-edits" // ask only before running commands
	ModeBypass      Mode = "bypass"       // never ask
	// ModeAuto runs commands and edits without asking because commands run in
	// the sandbox; it exists only where the sandbox works (Config.Auto).
	ModeAuto     Mode = "auto"
	ModeReadOnly Mode = "read-only" // refuse every call that changes files or runs commands
)

// Modes lists every mode, for help texts and mode pickers.
var Modes = []Mode{ModeDefault, ModeAcceptEdits, ModeAuto, ModeBypass, ModeReadOnly}

// ParseMode returns the mode named s.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown permission mode %q (want one of default, accept-edits, auto, bypass, read-only)", s)
}

// Decision is the user's answer to a permission request.
type Decision int

// The decisions.
const (
	AllowOnce   Decision = iota
	AllowAlways          // remembered for the rest of the session: what the request's Approval names
	Reject
)

// PermissionRequest is what a Permitter is asked about: one call, with its card so
// the user sees exactly what would happen.
type PermissionRequest struct {
	CallID     string
	Tool       string
	Args       []byte
	Card       card.Call
	Permission tool.Permission
	// Approval says what "always" would remember (Label), and whether it can
	// (Remember false: offer only once and reject).
	Approval tool.Approval
}

// Permitter asks the user about a call. An error means no answer could be had; a
// cancelled ctx cancels the turn.
type Permitter func(ctx context.Context, req PermissionRequest) (Decision, error)

// gate is what the mode says about a call before anyone is asked.
type gate int

const (
	gateRun gate = iota
	gateAsk
	gateRefuse
)

func modeGate(m Mode, p tool.Permission) gate {
	if p == tool.PermNone {
		return gateRun
	}
	switch m {
	case ModeBypass:
		return gateRun
	case ModeReadOnly:
		return gateRefuse
	case ModeAcceptEdits:
		if p == tool.PermEdit {
			return gateRun
		}
		return gateAsk
	case ModeAuto:
		return gateRun // only ever in force with the sandbox on (see Agent.SetMode)
	case ModeDefault:
		return gateAsk
	}
	return gateAsk // an unknown mode asks rather than runs
}

// ErrNoSandbox is why the auto mode is refused: commands would run unconfined.
var ErrNoSandbox = errors.New("the auto mode needs the sandbox, and bash commands here run without it (start dsh with --sandbox on, on a Linux kernel with Landlock)")
