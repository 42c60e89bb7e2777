package mcp

import (
	"regexp"
	"strings"
	"testing"
)

// promptName accepts what the regexp it replaced accepted, and nothing else.
func TestPromptName(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
	for _, name := range []string{
		"", "a", "review", "Fix-Bug_2.0", strings.Repeat("x", 64), strings.Repeat("x", 65),
		"two words", "a/b", "é", "a\n", "-", ".", "name:arg", "$ARGUMENTS", "a\x00",
	} {
		if got, want := promptName(name), re.MatchString(name); got != want {
			t.Errorf("promptName(%q) = %v, want %v", name, got, want)
		}
	}
}
