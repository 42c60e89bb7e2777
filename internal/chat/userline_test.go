package chat

import "testing"

// A status line the user's command prints keeps its colours and loses what
// else could move the cursor, set the clipboard or title, or ring: it is the
// user's command, but it reads the repository (a branch name can hold escapes).
func TestUserLine(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		width    int
		want     string
	}{
		{"plain", "main · opus", 40, "main · opus\x1b[0m"},
		{"colours", "\x1b[1;32mmain\x1b[m \x1b[38;5;208mopus\x1b[0m", 40, "\x1b[1;32mmain\x1b[m \x1b[38;5;208mopus\x1b[0m\x1b[0m"},
		{"clipboard and title", "a\x1b]52;c;ZXZpbA==\x07b\x1b]0;pwned\x1b\\c", 40, "abc\x1b[0m"},
		{"cursor and erase", "a\x1b[2J\x1b[H\x1b[10Ab", 40, "ab\x1b[0m"},
		{"controls", "a\x07\rb\tc\x00d", 40, "abcd\x1b[0m"},
		{"cut at the width", "\x1b[31m0123456789\x1b[0m", 4, "\x1b[31m0123\x1b[0m"},
		{"wide characters", "日本語です", 5, "日本\x1b[0m"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := userLine(tc.in, tc.width); got != tc.want {
				t.Errorf("userLine(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
			}
		})
	}
}
