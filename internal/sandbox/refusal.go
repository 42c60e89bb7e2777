package sandbox

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// denials are how commands report EACCES, EPERM and EROFS, the errors the
// sandbox refuses with; matched case-insensitively.
var denials = []string{"permission denied", "operation not permitted", "read-only file system"}

// Refusal returns the first line of a sandboxed command's output that shows the
// sandbox refused something, "" if none does. A line that reports a denial on
// an absolute path counts when the path is outside the policy's writable
// directories but the user could write it without the sandbox (so a denied
// read of another user's file does not); a denial that names no path counts
// too, as the sandbox also refuses connections and signals to processes
// outside it.
func (p *Policy) Refusal(output string) string {
	for line := range strings.Lines(output) {
		lower := strings.ToLower(line)
		denied := false
		for _, d := range denials {
			denied = denied || strings.Contains(lower, d)
		}
		if !denied {
			continue
		}
		line = strings.TrimSpace(line)
		paths := absPaths(line)
		if len(paths) == 0 {
			return line
		}
		for _, path := range paths {
			if !p.Allows(path) && userCanWrite(path) {
				return line
			}
		}
	}
	return ""
}

// absPaths returns the absolute paths a message names, without the quotes and
// punctuation around them.
func absPaths(line string) []string {
	var out []string
	for _, f := range strings.Fields(line) {
		f = strings.Trim(f, "'\"`‘’“”:,;()[]")
		if strings.HasPrefix(f, "/") {
			out = append(out, f)
		}
	}
	return out
}

// userCanWrite reports whether this (unconfined) process could write path, or
// create it.
func userCanWrite(path string) bool {
	err := unix.Access(path, unix.W_OK)
	if errors.Is(err, fs.ErrNotExist) {
		err = unix.Access(filepath.Dir(path), unix.W_OK)
	}
	return err == nil
}
