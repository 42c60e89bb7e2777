package chat

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/sahilm/fuzzy"
)

// History is the prompts typed in one workspace, oldest first, kept in a small
// file: one JSON string per line, so a prompt of several lines stays one entry.
type History struct {
	path    string
	entries []string
}

// maxHistory is how many prompts a workspace keeps.
const maxHistory = 500

// HistoryPath is the history file of the workspace root: under
// $XDG_STATE_HOME/dsh/history (else ~/.local/state/dsh/history), named by a
// hash of the root so any path makes a valid name.
func HistoryPath(root string, getenv func(string) string) string {
	base := getenv("XDG_STATE_HOME")
	if base == "" {
		base = filepath.Join(getenv("HOME"), ".local", "state")
	}
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(base, "dsh", "history", hex.EncodeToString(sum[:8])+".jsonl")
}

// LoadHistory reads a history file; a missing one is empty. Lines that do not
// decode are skipped.
func LoadHistory(path string) (*History, error) {
	h := &History{path: path}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return h, nil
	}
	if err != nil {
		return h, fmt.Errorf("history: %w", err)
	}
	defer func() { _ = f.Close() }() // read-only
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var s string
		if json.Unmarshal(sc.Bytes(), &s) == nil && s != "" {
			h.entries = append(h.entries, s)
		}
	}
	if len(h.entries) > maxHistory {
		h.entries = h.entries[len(h.entries)-maxHistory:]
	}
	return h, sc.Err()
}

// Add appends a prompt (not a repeat of the last one) and saves it. The file is
// rewritten when it has grown to twice what is kept.
func (h *History) Add(s string) error {
	if h == nil || strings.TrimSpace(s) == "" || (len(h.entries) > 0 && h.entries[len(h.entries)-1] == s) {
		return nil
	}
	h.entries = append(h.entries, s)
	if h.path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	if len(h.entries) > 2*maxHistory {
		h.entries = h.entries[len(h.entries)-maxHistory:]
		var b strings.Builder
		for _, e := range h.entries {
			line, _ := json.Marshal(e)
			b.Write(line)
			b.WriteByte('\n')
		}
		return os.WriteFile(h.path, []byte(b.String()), 0o600)
	}
	f, err := os.OpenFile(h.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	line, _ := json.Marshal(s)
	_, err = f.Write(append(line, '\n'))
	return errors.Join(err, f.Close())
}

// Len is the number of entries.
func (h *History) Len() int {
	if h == nil {
		return 0
	}
	return len(h.entries)
}

// At is entry i, 0 the oldest.
func (h *History) At(i int) string { return h.entries[i] }

// imageRef turns a pasted path to an image into an @ mention (quoted if it has
// spaces), relative when it is inside root, so it is attached like one; ok is
// false for anything else. Terminals paste a dropped file's path, quoted or
// with its spaces escaped.
func imageRef(root, pasted string) (string, bool) {
	p := strings.TrimSpace(pasted)
	if len(p) >= 2 && (p[0] == '\'' || p[0] == '"') && p[len(p)-1] == p[0] {
		p = p[1 : len(p)-1]
	}
	p = strings.ReplaceAll(p, `\ `, " ")
	p = strings.TrimPrefix(p, "file://")
	switch strings.ToLower(filepath.Ext(p)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp":
	default:
		return "", false
	}
	if p == "" || strings.ContainsAny(p, "\n\"") {
		return "", false
	}
	if filepath.IsAbs(p) {
		if r, err := filepath.Rel(root, p); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			p = r
		}
	}
	if strings.ContainsAny(p, " \t") {
		return `@"` + p + `"`, true
	}
	return "@" + p, true
}

// maxFiles bounds the files offered for @ completion.
const maxFiles = 20000

// skipDirs are not offered for @ completion.
var skipDirs = []string{".git", "node_modules", ".hg", ".svn", "vendor", "__pycache__", ".venv", "target"}

// listFiles walks root for @ completion: regular files, relative, slash-separated.
// An empty workspace is an empty list, not nil: it was walked.
func listFiles(root string) []string {
	out := []string{}
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil //nolint:nilerr // an unreadable directory is skipped, not the end of the list
		}
		if d.IsDir() {
			if path != root && slices.Contains(skipDirs, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if len(out) >= maxFiles {
			return filepath.SkipAll
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, path)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(out)
	return out
}

// matchFiles ranks files by fuzzy match with pattern, best first.
func matchFiles(files []string, pattern string, n int) []string {
	if pattern == "" {
		return files[:min(n, len(files))]
	}
	ms := fuzzy.Find(pattern, files)
	out := make([]string, 0, min(n, len(ms)))
	for _, m := range ms[:min(n, len(ms))] {
		out = append(out, m.Str)
	}
	return out
}

// Pastes: a paste of more than pasteLines lines or pasteBytes bytes shows in the
// input as one placeholder (attach.Placeholder) and becomes a paste block of the
// prompt, so the input stays small and typing stays fast.
const (
	pasteLines = 8
	pasteBytes = 2000
)
