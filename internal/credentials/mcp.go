package credentials

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/dsh-dev/dsh/internal/workspace"
)

// maxTokensSize bounds the MCP sign-ins file: tokens for many servers, not a dump.
const maxTokensSize = 1 << 20

// MCPTokens keeps what signing in to MCP servers gave dsh (tokens, and the
// client each server's authorization server registered), one entry per key,
// in a file beside the API keys, readable by the user alone. The sandbox hides
// the directory from commands; nothing here reaches a log.
type MCPTokens struct {
	Path string
	mu   sync.Mutex
}

// MCPTokensPath is the file MCPTokens keep: beside Path's; "" when there is none.
func MCPTokensPath(getenv func(string) string) string {
	p := Path(getenv)
	if p == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(p), "mcp-tokens.json")
}

// Load returns key's entry; nil when there is none.
func (t *MCPTokens) Load(key string) ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	all, err := t.read()
	return all[key], err
}

// Save sets key's entry to value; nil removes it.
func (t *MCPTokens) Save(key string, value []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	all, err := t.read()
	if err != nil {
		return err
	}
	if value == nil {
		delete(all, key)
	} else {
		all[key] = json.RawMessage(value)
	}
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	if t.Path == "" {
		return fmt.Errorf("no place for MCP sign-ins: set HOME or XDG_CONFIG_HOME")
	}
	if err := workspace.WriteOwnFile(t.Path, b, 0o600); err != nil {
		return fmt.Errorf("storing the MCP sign-in: %w", err)
	}
	return nil
}

func (t *MCPTokens) read() (map[string]json.RawMessage, error) {
	all := map[string]json.RawMessage{}
	if t.Path == "" {
		return all, nil
	}
	b, err := readPrivate(t.Path, maxTokensSize)
	if err != nil || b == nil {
		return all, err
	}
	if err := json.Unmarshal(b, &all); err != nil {
		return map[string]json.RawMessage{}, fmt.Errorf("%s: %w", t.Path, err)
	}
	return all, nil
}
