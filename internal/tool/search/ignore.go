package search

import (
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ignoreRule is one pattern line of a .gitignore or .ignore file, in git's
// syntax: "!" re-includes, a trailing "/" matches directories only, a "/" at the
// start or in the middle anchors the pattern to the file's directory, and an
// unanchored pattern matches a name at any depth below it.
type ignoreRule struct {
	glob     string // a doublestar pattern: braces escaped, leading "/" dropped
	negate   bool
	dirOnly  bool
	anchored bool
}

// ignoreSet is the rules of one ignore file, relative to the directory holding it.
type ignoreSet struct {
	rules []ignoreRule
}

// parseIgnore reads the rules of an ignore file. Malformed patterns are dropped,
// as git does with patterns it cannot use.
func parseIgnore(data []byte) *ignoreSet {
	s := &ignoreSet{}
	for line := range strings.SplitSeq(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if r, ok := parseIgnoreLine(line); ok {
			s.rules = append(s.rules, r)
		}
	}
	if len(s.rules) == 0 {
		return nil
	}
	return s
}

func parseIgnoreLine(line string) (ignoreRule, bool) {
	var r ignoreRule
	if line == "" || line[0] == '#' {
		return r, false
	}
	line = trimIgnoreSpace(line)
	if strings.HasPrefix(line, "!") {
		r.negate, line = true, line[1:]
	} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") && !strings.HasSuffix(line, `\/`) {
		r.dirOnly, line = true, strings.TrimRight(line, "/")
	}
	if line == "" {
		return r, false
	}
	if i := strings.Index(line, "/"); i >= 0 {
		r.anchored = true
		line = strings.TrimPrefix(line, "/")
	}
	// git's "dir/**" matches what is inside dir, not dir itself, so that a later
	// "!dir/keep" can still re-include something in it.
	if strings.HasSuffix(line, "/**") {
		line += "/*"
	}
	// Braces are literal in git, alternation in doublestar.
	line = strings.NewReplacer("{", `\{`, "}", `\}`).Replace(line)
	if !doublestar.ValidatePattern(line) {
		return r, false
	}
	r.glob = line
	return r, true
}

// trimIgnoreSpace drops trailing spaces unless a backslash escapes them.
func trimIgnoreSpace(s string) string {
	end := len(s)
	for end > 0 && s[end-1] == ' ' {
		if end >= 2 && s[end-2] == '\\' {
			break
		}
		end--
	}
	return s[:end]
}

// match says whether the set decides about rel (a slash-separated path relative
// to the set's directory, name its last element): ignored, or re-included by a
// negation. The last matching rule decides, as in git.
func (s *ignoreSet) match(rel, name string, dir bool) (ignored, decided bool) {
	for i := len(s.rules) - 1; i >= 0; i-- {
		r := &s.rules[i]
		if r.dirOnly && !dir {
			continue
		}
		subject := name
		if r.anchored {
			subject = rel
		}
		if ok, _ := doublestar.Match(r.glob, subject); ok {
			return !r.negate, true
		}
	}
	return false, false
}

// ignoreFrame is the ignore files of one directory on the way down. An entry's
// path relative to the frame's directory is lead + rel[depth:], where rel is the
// entry's path relative to the search root: a frame of the root or below it has
// no lead and depth len("its/path/"); a frame of an ancestor of the root has
// depth 0 and lead "the/root/" (the root's path relative to it).
type ignoreFrame struct {
	lead  string
	depth int
	sets  []*ignoreSet // lowest precedence first
}

// ignored decides about an entry at rel (relative to the search root) given the
// frames from the outermost directory down to the entry's own: the innermost
// frame that has a matching rule decides; an entry no rule matches is kept.
func ignored(frames []ignoreFrame, rel, name string, dir bool) bool {
	for i := len(frames) - 1; i >= 0; i-- {
		f := &frames[i]
		sub := f.lead + rel[f.depth:]
		for j := len(f.sets) - 1; j >= 0; j-- {
			if ign, ok := f.sets[j].match(sub, name, dir); ok {
				return ign
			}
		}
	}
	return false
}
