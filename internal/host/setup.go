package host

import (
	"github.com/dsh-dev/dsh/internal/config"
	"github.com/dsh-dev/dsh/internal/credentials"
	"github.com/dsh-dev/dsh/internal/mcp"
	"github.com/dsh-dev/dsh/internal/provider/models"
	"github.com/dsh-dev/dsh/internal/provider/providers"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// Setup is what a session in a directory opens with: the host's options, as
// the settings there resolve, and the project settings that were not applied,
// for the user to read.
type Setup struct {
	Options Options
	Ignored []string
}

// MCPServer is an MCP server a session starts.
type MCPServer = mcp.ServerConfig

// CheckRoot says whether dir can be a session's workspace root.
func CheckRoot(dir string) error {
	ws, err := workspace.New(dir, false)
	if err != nil {
		return err
	}
	return ws.Close()
}

// LookupModel is what is known of a model by its id.
func LookupModel(id string) Model { return models.Lookup(id) }

// Signing in: a provider's key reaches dsh through the environment or the
// user's credentials file.

// Keyed says some provider's key reaches dsh.
func Keyed(getenv func(string) string) bool { return providers.Keyed(credentials.Env(getenv)) }

// KeySet says the key variable name reaches dsh.
func KeySet(getenv func(string) string, name string) bool { return credentials.Env(getenv)(name) != "" }

// KeepKey keeps key, given as the variable name, in the user's credentials
// file when their configuration says api_key_store = "file"; otherwise it
// stays where it came from.
func KeepKey(getenv func(string) string, name, key string) error {
	cfg, err := config.Load("", getenv)
	if err != nil || cfg.APIKeyStore != "file" {
		return nil //nolint:nilerr // an unreadable configuration keeps nothing; the key still works for this run
	}
	return credentials.Store(credentials.Path(getenv), name, key)
}

// ForgetKeys removes the keys dsh kept in the user's credentials file (dsh
// login, an editor's sign-in); keys in the environment are the environment's.
func ForgetKeys(getenv func(string) string) error {
	return credentials.Forget(credentials.Path(getenv))
}
