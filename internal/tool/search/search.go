// Package search holds dsh's read-only search tools: grep (regular expressions
// over file contents), glob (file names by pattern, newest first) and ls (a
// directory tree). They walk the workspace like ripgrep — hidden files skipped,
// .gitignore and .ignore honoured, symlinks not followed — and their results are
// search cards, structured in meta.
package search

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// Tools returns grep, glob and ls.
func Tools() []tool.Tool { return []tool.Tool{Grep(), Glob(), LS()} }

// Bounds of the model-facing output shared by the tools.
const (
	defaultLimit = 100      // entries shown when head_limit is not given
	maxLimit     = 2000     // the most entries one call shows
	maxOutput    = 50 << 10 // bytes of model-facing text per call
	maxLineBytes = 500      // bytes of one matching line shown
)

// target is a resolved path argument: the absolute path, what it is, and how
// results under it are named for the model.
type target struct {
	abs   string
	isDir bool
	// top is the workspace root when abs is inside it: ignore files from top
	// down to abs apply. It is abs itself when abs is outside (--allow-outside).
	top string
	// dir is the directory relative result paths are relative to (the session's
	// current directory), prefix what joins dir to abs ("" when they are one).
	dir, prefix string
}

// resolve is the one place the search tools turn a path argument into a file
// system path, confined to the workspace by its Resolve.
func resolve(env tool.Env, p string) (target, error) {
	ws := env.Session.Workspace
	if p == "" {
		p = "."
	}
	abs, err := ws.Resolve(p)
	if err != nil {
		return target{}, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return target{}, fmt.Errorf("%s does not exist", p)
		}
		return target{}, err
	}
	t := target{abs: abs, isDir: st.IsDir(), top: abs, dir: ws.Cwd()}
	if ws.Contains(abs) {
		t.top = ws.Root()
	}
	if !t.isDir && !st.Mode().IsRegular() {
		return target{}, fmt.Errorf("%s is not a regular file or a directory", p)
	}
	switch rel, err := filepath.Rel(t.dir, abs); {
	case err != nil || rel == ".." || strings.HasPrefix(rel, "../"):
		t.prefix = abs // outside the current directory: absolute paths read better
	case rel != ".":
		t.prefix = filepath.ToSlash(rel)
	}
	return t, nil
}

// display names a path below the target (rel relative to it) as results show it.
func (t target) display(rel string) string {
	switch {
	case rel == "":
		if t.prefix == "" {
			return "."
		}
		return t.prefix
	case t.prefix == "":
		return rel
	}
	return t.prefix + "/" + rel
}

// join is the absolute path of rel below the target.
func (t target) join(rel string) string {
	if rel == "" {
		return t.abs
	}
	return filepath.Join(t.abs, filepath.FromSlash(rel))
}

// readLines returns the text of the wanted lines of a file below the target (up
// to line last), as lineText shows them. A file that cannot be read gives none.
func (t target) readLines(rel string, want map[int]bool, last int) map[int]string {
	out := map[int]string{}
	flags := unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY
	if rel != "" {
		flags |= unix.O_NOFOLLOW // a walked file, never a link: it must still be none
	}
	fd, err := unix.Open(t.join(rel), flags, 0)
	if err != nil {
		return out
	}
	f := os.NewFile(uintptr(fd), rel)
	defer func() { _ = f.Close() }()
	r := bufio.NewReaderSize(f, 64<<10)
	for ln := 1; ln <= last; ln++ {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) { // a long line: keep its start only
			line = append([]byte(nil), line[:min(len(line), 2*maxLineBytes)]...)
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
		}
		if len(line) == 0 && err != nil {
			break
		}
		if want[ln] {
			out[ln] = lineText(bytes.TrimSuffix(line, []byte{'\n'}))
		}
		if err != nil {
			break
		}
	}
	return out
}

// Meta is the result meta of the three tools: the search card's data.
type Meta struct {
	Query     string            `json:"query"`
	Dir       string            `json:"dir"`
	Files     []card.SearchFile `json:"files,omitempty"`
	Paths     []string          `json:"paths,omitempty"`
	Total     int               `json:"total"`
	Truncated bool              `json:"truncated,omitzero"`
}

// Validate checks what the card's own validation checks, and that the query
// and the absolute directory are there.
func (m *Meta) Validate() error {
	if m.Query == "" {
		return errors.New("search meta: empty query")
	}
	if !strings.HasPrefix(m.Dir, "/") {
		return errors.New("search meta: dir is not absolute")
	}
	return card.ValidateResult(m.card(""))
}

func (m *Meta) card(title string) *card.SearchResult {
	return &card.SearchResult{Title: title, Query: m.Query, Dir: m.Dir, Files: m.Files, Paths: m.Paths,
		Total: m.Total, Truncated: m.Truncated}
}

func plural(n int, unit string) string {
	switch {
	case n == 1:
		return "1 " + unit
	case strings.HasSuffix(unit, "y"):
		return strconv.Itoa(n) + " " + unit[:len(unit)-1] + "ies"
	}
	return strconv.Itoa(n) + " " + unit + "s"
}
