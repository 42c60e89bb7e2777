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
	"regexp"
	"slices"
	"strconv"
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

// Attachments: a prompt that names a workspace file as @path gets the file
// appended after the text, so the model has it without a read call:
//
//	explain @main.go
//
//	<attached file="main.go">
//	```go
//	…
//	```
//	</attached>
//
// The chat shows the typed text and "attached main.go"; the log keeps all of it.
const (
	attachOpen  = "\n\n<attached file="
	attachClose = "</attached>"
	// maxAttach bounds one attached file; a larger one is refused with a note.
	maxAttach = 256 << 10
)

// atRef finds @path mentions: after the start or a space, up to the next space.
var atRef = regexp.MustCompile(`(?:^|\s)@([^\s@]+)`)

// attach appends the files the prompt mentions as @path. It reports the files
// attached and the mentions that were not attached, with why.
func attach(root, prompt string) (string, []string, []string) {
	var b strings.Builder
	b.WriteString(prompt)
	var files, skipped []string
	seen := map[string]bool{}
	for _, m := range atRef.FindAllStringSubmatch(prompt, -1) {
		rel := strings.TrimRight(m[1], ".,;:!?)")
		if seen[rel] {
			continue
		}
		seen[rel] = true
		data, err := readInside(root, rel)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("@%s: %v", rel, err))
			continue
		}
		fence := "```"
		for strings.Contains(string(data), fence) {
			fence += "`"
		}
		fmt.Fprintf(&b, "%s%s>\n%s%s\n%s", attachOpen, strconv.Quote(rel), fence, lang(rel), string(data))
		if len(data) > 0 && data[len(data)-1] != '\n' {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s\n%s", fence, attachClose)
		files = append(files, rel)
	}
	return b.String(), files, skipped
}

// readInside reads a regular file inside root (symbolic links resolved), so a
// mention cannot attach /etc/passwd or a link pointing out of the workspace.
func readInside(root, rel string) ([]byte, error) {
	if filepath.IsAbs(rel) {
		return nil, errors.New("not a path in the workspace")
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	p, err := filepath.EvalSymlinks(filepath.Join(root, rel))
	if err != nil {
		return nil, errors.New("no such file")
	}
	if r, err := filepath.Rel(realRoot, p); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return nil, errors.New("outside the workspace")
	}
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, errors.New("not a regular file")
	case fi.Size() > maxAttach:
		return nil, fmt.Errorf("%d bytes is more than %d", fi.Size(), maxAttach)
	}
	return os.ReadFile(p)
}

// lang is a fence's info string from a file's extension.
func lang(path string) string {
	return strings.TrimPrefix(filepath.Ext(path), ".")
}

// splitAttachments undoes attach for display: the typed text and the files.
func splitAttachments(text string) (string, []string) {
	i := strings.Index(text, attachOpen)
	if i < 0 {
		return text, nil
	}
	typed, rest := text[:i], text[i:]
	var files []string
	for {
		after, ok := strings.CutPrefix(rest, attachOpen)
		if !ok {
			break
		}
		q, err := strconv.QuotedPrefix(after)
		if err != nil {
			break
		}
		name, _ := strconv.Unquote(q)
		files = append(files, name)
		end := strings.Index(after, attachClose)
		if end < 0 {
			break
		}
		rest = after[end+len(attachClose):]
	}
	return typed, files
}

// maxFiles bounds the files offered for @ completion.
const maxFiles = 20000

// skipDirs are not offered for @ completion.
var skipDirs = []string{".git", "node_modules", ".hg", ".svn", "vendor", "__pycache__", ".venv", "target"}

// listFiles walks root for @ completion: regular files, relative, slash-separated.
func listFiles(root string) []string {
	var out []string
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
// input as one placeholder and is put back when the prompt is sent, so the input
// stays small and typing stays fast.
const (
	pasteLines = 8
	pasteBytes = 2000
)

var pasteRef = regexp.MustCompile(`\[paste #(\d+): [^\]]*\]`)

func pastePlaceholder(n int, text string) string {
	lines := strings.Count(strings.TrimSuffix(text, "\n"), "\n") + 1
	return fmt.Sprintf("[paste #%d: %d lines, %d bytes]", n, lines, len(text))
}

// expandPastes puts the pasted texts back in place of their placeholders.
func expandPastes(s string, pastes map[int]string) string {
	if len(pastes) == 0 {
		return s
	}
	return pasteRef.ReplaceAllStringFunc(s, func(ref string) string {
		n, _ := strconv.Atoi(pasteRef.FindStringSubmatch(ref)[1])
		if text, ok := pastes[n]; ok {
			return text
		}
		return ref
	})
}
