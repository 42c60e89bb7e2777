package host

import (
	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/command"
	"github.com/dsh-dev/dsh/internal/provider/models"
	"github.com/dsh-dev/dsh/internal/sandbox"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// The host's vocabulary: what its API speaks of, named here so that a consumer
// (acp, chat, web) imports the host and never the packages behind it.

// Mode is a session's permission mode.
type Mode = agent.Mode

// The permission modes.
const (
	ModeDefault     = agent.ModeDefault
	ModeAcceptEdits = agent.ModeAcceptEdits
	ModeAuto        = agent.ModeAuto
	ModeBypass      = agent.ModeBypass
	ModeReadOnly    = agent.ModeReadOnly
	ModePlan        = agent.ModePlan
)

// Modes are the permission modes, in the order they are offered.
var Modes = agent.Modes

// ParseMode reads a mode's name.
func ParseMode(s string) (Mode, error) { return agent.ParseMode(s) }

// StopReason says how a turn ended.
type StopReason = agent.StopReason

// The stop reasons.
const (
	StopEndTurn   = agent.StopEndTurn
	StopMaxTokens = agent.StopMaxTokens
	StopRefusal   = agent.StopRefusal
	StopMaxTurns  = agent.StopMaxTurns
	StopBudget    = agent.StopBudget
	StopTimeout   = agent.StopTimeout
	StopCancelled = agent.StopCancelled
	StopError     = agent.StopError
)

// Decision is the user's answer to a permission request.
type Decision = agent.Decision

// The decisions.
const (
	AllowOnce   = agent.AllowOnce
	AllowAlways = agent.AllowAlways
	Reject      = agent.Reject
)

// PermissionRequest is what the user is asked about a call.
type PermissionRequest = agent.PermissionRequest

// QuestionRequest is a tool's question to the user.
type QuestionRequest = agent.QuestionRequest

// Command is a slash command of a session's table.
type Command = command.Command

// Where says which consumers offer a command: the terminal (the chat and dsh
// run) or the editor (ACP).
type Where = command.Where

// The consumers.
const (
	Terminal = command.Terminal
	Editor   = command.Editor
	Both     = command.Both
)

// Model is a model a session may be set to.
type Model = models.Info

// SandboxMode is how a session's commands are confined.
type SandboxMode = sandbox.Mode

// The sandbox modes.
const (
	SandboxOff        = sandbox.Off
	SandboxOn         = sandbox.On
	SandboxNetworkOff = sandbox.NetworkOff
)

// WorkspaceFile is a path of a session's workspace, located: what a consumer
// that serves files (the editor's) is handed.
type WorkspaceFile = workspace.File

// Loan is a located path lent to another process (the editor), watched while
// it uses it (workspace.File.Lend).
type Loan = workspace.Loan

// ErrMoved says a lent path was moved while it was lent.
var ErrMoved = workspace.ErrMoved
