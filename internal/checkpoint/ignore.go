package checkpoint

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/dsh-dev/dsh/internal/workspace"
)

// A file a prompt's file tools make is laid into its "after" only if a walk
// would take it: not ignored. git check-ignore says so at the price of a
// process per prompt (most of what a one-write prompt's checkpoint cost).
// The plain rules are read here instead, as git reads them; any rule on a
// path's way that is not plain, a rules file that cannot be read as git
// would, or git config that may add rules or fold case, and git decides.

// maxIgnoreFile caps a rules file read here; a longer one is git's to read.
const maxIgnoreFile = 1 << 20

// ignoreRule is a plain gitignore pattern: literal text with * and ?, no
// brackets, escapes or "**", which path.Match reads as git's wildmatch does.
type ignoreRule struct {
	pat      string
	neg, dir bool // "!": re-includes; a trailing "/": directories only
	basename bool // no "/" in it: matches a name at any depth
}

// ignoreList is the rules of one file, relative to dir ("" for the root
// and for the files not in the workspace).
type ignoreList struct {
	dir   string
	rules []ignoreRule
}

// parseIgnore reads b's rules; ok is false when one is not plain.
func parseIgnore(b []byte, dir string) (ignoreList, bool) {
	l := ignoreList{dir: dir}
	if bytes.HasPrefix(b, []byte("\xef\xbb\xbf")) {
		return l, false // a byte-order mark git skips
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		if strings.ContainsAny(line, "[\\\r") || strings.Contains(line, "**") {
			return l, false
		}
		line = strings.TrimRight(line, " ")
		if line == "" {
			continue
		}
		var r ignoreRule
		if r.neg = line[0] == '!'; r.neg {
			line = line[1:]
		}
		if r.dir = strings.HasSuffix(line, "/"); r.dir {
			line = line[:len(line)-1]
		}
		if line == "" || strings.HasSuffix(line, "/") {
			return l, false
		}
		r.basename = !strings.Contains(line, "/")
		r.pat = strings.TrimPrefix(line, "/")
		l.rules = append(l.rules, r)
	}
	return l, true
}

// match is 1 when l's last rule that matches slash path p (a directory when
// isDir) excludes it, -1 when it is a "!" rule, 0 when none matches.
func (l ignoreList) match(p string, isDir bool) int {
	name := p[strings.LastIndexByte(p, '/')+1:]
	rel := p
	if l.dir != "" {
		if !strings.HasPrefix(p, l.dir+"/") {
			return 0
		}
		rel = p[len(l.dir)+1:]
	}
	for i := len(l.rules) - 1; i >= 0; i-- {
		r := l.rules[i]
		if r.dir && !isDir {
			continue
		}
		subject := rel
		if r.basename {
			subject = name
		}
		if ok, _ := path.Match(r.pat, subject); ok {
			if r.neg {
				return -1
			}
			return 1
		}
	}
	return 0
}

// ignoredHere says whether the ignore rules leave out the file at slash path
// p; known is false when git must say.
func (s *Store) ignoredHere(p string) (ignored, known bool) {
	global, ok := s.globalIgnore()
	if !ok {
		return false, false
	}
	info := ignoreList{}
	switch b, err := os.ReadFile(filepath.Join(s.dir, "info", "exclude")); {
	case err == nil:
		if info, ok = parseIgnore(b, ""); !ok {
			return false, false
		}
	case !errors.Is(err, fs.ErrNotExist):
		return false, false
	}
	// As git does: a directory's rules are read once it is known not to be
	// excluded; a file in an excluded directory is excluded, whatever the
	// rules below say. Deeper files' rules come first, then info/exclude,
	// then the user's.
	var lists []ignoreList
	decide := func(q string, isDir bool) int {
		for i := len(lists) - 1; i >= 0; i-- {
			if m := lists[i].match(q, isDir); m != 0 {
				return m
			}
		}
		if m := info.match(q, isDir); m != 0 {
			return m
		}
		return global.match(q, isDir)
	}
	parts := strings.Split(p, "/")
	for k := range parts {
		dir := strings.Join(parts[:k], "/")
		if k > 0 && decide(dir, true) > 0 {
			return true, true
		}
		l, ok := s.dirIgnore(dir)
		if !ok {
			return false, false
		}
		lists = append(lists, l)
	}
	return decide(p, false) > 0, true
}

// dirIgnore is the rules of directory dir's .gitignore (none when missing).
func (s *Store) dirIgnore(dir string) (ignoreList, bool) {
	rel := path.Join(dir, ".gitignore")
	fi, err := os.Lstat(filepath.Join(s.root, filepath.FromSlash(rel)))
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid):
		return ignoreList{dir: dir}, true
	case err != nil || !fi.Mode().IsRegular():
		return ignoreList{}, false // git does not follow a link there, or cannot read it
	}
	b, more, err := workspace.ReadProjectFile(s.root, rel, maxIgnoreFile)
	if err != nil || more {
		return ignoreList{}, false
	}
	return parseIgnore(b, dir)
}

// globalIgnore is the user's own ignore file's rules, where git's config
// can be read plainly: the system's config at its place for git at
// /usr/bin/git, the user's and the store's, none of which sets an excludes
// file, folds case or includes another.
func (s *Store) globalIgnore() (ignoreList, bool) {
	for _, k := range []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG"} {
		if _, set := os.LookupEnv(k); set {
			return ignoreList{}, false
		}
	}
	home := os.Getenv("HOME")
	if s.git != "/usr/bin/git" || home == "" {
		return ignoreList{}, false
	}
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" {
		xdg = filepath.Join(home, ".config")
	}
	for _, f := range []string{"/etc/gitconfig", filepath.Join(xdg, "git", "config"), filepath.Join(home, ".gitconfig"), filepath.Join(s.dir, "config")} {
		b, err := readCapped(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		lower := strings.ToLower(string(b))
		if err != nil || strings.Contains(lower, "excludesfile") || strings.Contains(lower, "ignorecase") || strings.Contains(lower, "include") {
			return ignoreList{}, false
		}
	}
	b, err := readCapped(filepath.Join(xdg, "git", "ignore"))
	if errors.Is(err, fs.ErrNotExist) {
		return ignoreList{}, true
	}
	if err != nil {
		return ignoreList{}, false
	}
	return parseIgnore(b, "")
}

// readCapped reads the user's file f, a regular one, at most maxIgnoreFile
// of it (longer is an error).
func readCapped(f string) ([]byte, error) {
	b, more, err := workspace.ReadOwnFile(f, maxIgnoreFile)
	if err == nil && more {
		err = errors.New("too long")
	}
	return b, err
}
