package config

import (
	"fmt"

	"github.com/go-json-experiment/json"
)

// ClaudeHooks reads hooks in the shape of Claude Code's settings
// ({"hooks": {EVENT: [...]}}) from b, which came from source: a plugin's
// hooks/hooks.json. What dsh does not run is skipped with a note.
func ClaudeHooks(b []byte, source string) ([]Hook, []string, error) {
	var s claudeSettings
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", source, err)
	}
	hs, notes, err := hookTable(s.Hooks, source, false)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", source, err)
	}
	return hs, notes, nil
}
