package claudehome

import "testing"

func TestDirAndJSON(t *testing.T) {
	for _, tc := range []struct {
		name      string
		env       map[string]string
		dir, json string
	}{
		{"home", map[string]string{"HOME": "/home/u"}, "/home/u/.claude", "/home/u/.claude.json"},
		{"config dir", map[string]string{"HOME": "/home/u", "CLAUDE_CONFIG_DIR": "/home/u/.config/claude/"}, "/home/u/.config/claude", "/home/u/.config/claude/.claude.json"},
		{"config dir with ~", map[string]string{"HOME": "/home/u", "CLAUDE_CONFIG_DIR": "~/work-claude"}, "/home/u/work-claude", "/home/u/work-claude/.claude.json"},
		{"a relative config dir is not one", map[string]string{"HOME": "/home/u", "CLAUDE_CONFIG_DIR": "claude"}, "/home/u/.claude", "/home/u/.claude.json"},
		{"neither", map[string]string{"HOME": "rel"}, "", ""},
	} {
		getenv := func(k string) string { return tc.env[k] }
		if got := Dir(getenv); got != tc.dir {
			t.Errorf("%s: Dir = %q, want %q", tc.name, got, tc.dir)
		}
		if got := JSON(getenv); got != tc.json {
			t.Errorf("%s: JSON = %q, want %q", tc.name, got, tc.json)
		}
	}
}
