package checkpoint

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The plain rules read without git say what git check-ignore says, for
// each path: nested .gitignore files, "!" rules, directory-only and
// anchored rules, info/exclude, excluded directories.
func TestIgnoredHereIsGits(t *testing.T) {
	root, s := newRepo(t)
	if s.git != "/usr/bin/git" {
		t.Skip("the rules are git's to read for a git elsewhere")
	}
	s.o.Ignore = []string{"*.tmp", "cache/", "!keep.tmp"}
	write(t, root, ".gitignore", "build/\n*.log\n!keep.log\n/top.txt\ndocs/*.md\n# a comment\nfoo?.txt  \nsub/deep/fixed.txt\n")
	write(t, root, "sub/.gitignore", "!*.log\nlocal/\nx.txt\n")
	write(t, root, "sub/deep/.gitignore", "/only-here.txt\n*.tmp\n")
	snap(t, s) // writes info/exclude
	paths := []string{
		"plain.txt", "a.log", "keep.log", "sub/a.log", "sub/deep/a.log", "build/x.txt", "sub/build/x.txt",
		"top.txt", "sub/top.txt", "docs/a.md", "docs/sub/a.md", "fooa.txt", "foo.txt", "sub/x.txt",
		"sub/deep/x.txt", "sub/local/y.txt", "sub/deep/only-here.txt", "sub/only-here.txt", "a.tmp",
		"keep.tmp", "sub/deep/keep.tmp", "cache/z.txt", "sub/cache/z.txt", "dir.log/inner.txt",
		"sub/deep/fixed.txt", "build", ".gitignore",
	}
	var in []byte
	for _, p := range paths {
		in = append(in, p+"\x00"...)
	}
	out, err := s.run(context.Background(), in, "check-ignore", "-z", "--no-index", "--stdin")
	if exit := (*exec.ExitError)(nil); err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	gits := map[string]bool{}
	for p := range strings.SplitSeq(string(out), "\x00") {
		gits[p] = true
	}
	for _, p := range paths {
		ignored, known := s.ignoredHere(p)
		if !known {
			t.Errorf("%s: not known without git", p)
			continue
		}
		if ignored != gits[p] {
			t.Errorf("%s: ignored %v, git says %v", p, ignored, gits[p])
		}
	}
}

// A rule that is not plain, or a rules file git would not read as it is
// read here, leaves the decision to git.
func TestIgnoredHereLeavesToGit(t *testing.T) {
	for _, tc := range []struct {
		name, rules string
	}{
		{"brackets", "[ab].txt\n"},
		{"an escape", "\\#x\n"},
		{"two stars", "**/x\n"},
		{"a carriage return", "x.txt\r\n"},
		{"a byte-order mark", "\xef\xbb\xbfx.txt\n"},
		{"double slash", "x//\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, s := newRepo(t)
			write(t, root, "sub/.gitignore", tc.rules)
			if _, known := s.ignoredHere("sub/x.txt"); known {
				t.Errorf("rules %q are read without git", tc.rules)
			}
			if _, known := s.ignoredHere("other/x.txt"); !known && s.git == "/usr/bin/git" {
				t.Errorf("rules %q of another directory leave other/x.txt to git", tc.rules)
			}
		})
	}
	t.Run("a linked .gitignore", func(t *testing.T) {
		root, s := newRepo(t)
		write(t, root, "rules", "x.txt\n")
		if err := os.Symlink("../rules", filepath.Join(root, "dir", ".gitignore")); err != nil {
			t.Fatal(err)
		}
		if _, known := s.ignoredHere("dir/x.txt"); known {
			t.Error("a linked .gitignore is read without git")
		}
	})
	t.Run("an excludes file in git's config", func(t *testing.T) {
		root, s := newRepo(t)
		t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(root, "cfg"))
		if _, known := s.ignoredHere("x.txt"); known {
			t.Error("with GIT_CONFIG_GLOBAL set, the rules are read without git")
		}
	})
}
