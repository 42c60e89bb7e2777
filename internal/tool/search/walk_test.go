package search

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestIgnoreRules(t *testing.T) {
	for _, tc := range []struct {
		rules   string
		rel     string
		dir     bool
		ignored bool
		decided bool
	}{
		{"*.log", "a.log", false, true, true},
		{"*.log", "sub/deep/a.log", false, true, true},
		{"*.log\n!keep.log", "x/keep.log", false, false, true},
		{"build/", "build", true, true, true},
		{"build/", "build", false, false, false}, // a file named build
		{"/top", "top", false, true, true},
		{"/top", "sub/top", false, false, false},
		{"doc/*.txt", "doc/a.txt", false, true, true},
		{"doc/*.txt", "doc/sub/a.txt", false, false, false},
		{"doc/**/*.txt", "doc/sub/a.txt", false, true, true},
		{"**/gen", "a/b/gen", true, true, true},
		{"dir/**", "dir", true, false, false}, // its contents, not itself
		{"dir/**", "dir/x", false, true, true},
		{"# comment\n\n", "comment", false, false, false},
		{"\\#hash", "#hash", false, true, true},
		{"\\!bang", "!bang", false, true, true},
		{"trailing   ", "trailing", false, true, true},
		{"{a,b}", "a", false, false, false}, // braces are literal in git
		{"{a,b}", "{a,b}", false, true, true},
		{"a?c", "abc", false, true, true},
		{"[ab]x", "bx", false, true, true},
		{"*.log\r", "a.log", false, true, true},
	} {
		s := parseIgnore([]byte(tc.rules))
		if s == nil {
			if tc.decided {
				t.Errorf("%q: no rules parsed", tc.rules)
			}
			continue
		}
		name := tc.rel[strings.LastIndexByte(tc.rel, '/')+1:]
		ign, ok := s.match(tc.rel, name, tc.dir)
		if ign != tc.ignored || ok != tc.decided {
			t.Errorf("%q on %q (dir %v): ignored %v decided %v, want %v %v", tc.rules, tc.rel, tc.dir, ign, ok, tc.ignored, tc.decided)
		}
	}
}

// grepFiles greps root for pattern and lists the matching files.
func grepFiles(t *testing.T, root, path, pattern string, extra map[string]any) []string {
	t.Helper()
	args := map[string]any{"pattern": pattern, "output": "files_with_matches"}
	if path != "" {
		args["path"] = path
	}
	for k, v := range extra {
		args[k] = v
	}
	r, m, _ := call(t, Grep(), envAt(t, root), args)
	if r.IsError {
		t.Fatalf("grep %v: %s", args, r.TextOf())
	}
	return m.Paths
}

// TestWalkLikeRipgrep: hidden entries, .ignore everywhere, .gitignore (nested,
// negated, from an ancestor) only inside a git repository, binary files and
// special files skipped.
func TestWalkLikeRipgrep(t *testing.T) {
	root := tree(t, map[string]string{
		"a.txt":                  "needle\n",
		".hidden.txt":            "needle\n",
		".hiddendir/x.txt":       "needle\n",
		"ign/.ignore":            "skipped.txt\n",
		"ign/skipped.txt":        "needle\n",
		"ign/kept.txt":           "needle\n",
		"norepo/.gitignore":      "*.txt\n",
		"norepo/b.txt":           "needle\n",
		"repo/.git/HEAD":         "ref: x\n",
		"repo/.gitignore":        "*.gen\nbuild/\n!keep.gen\n",
		"repo/x.gen":             "needle\n",
		"repo/keep.gen":          "needle\n",
		"repo/build/out.txt":     "needle\n",
		"repo/src/c.txt":         "needle\n",
		"repo/src/.gitignore":    "!x.gen\nlocal.txt\n",
		"repo/src/x.gen":         "needle\n",
		"repo/src/local.txt":     "needle\n",
		"repo/.git/info/exclude": "excluded.txt\n",
		"repo/excluded.txt":      "needle\n",
		"bin.dat":                "needle\x00\x01\x02",
		"late-nul.txt":           strings.Repeat("x", 300<<10) + "\x00needle\n", // NUL in the second chunk
	})
	if err := os.Symlink(filepath.Join(root, "a.txt"), filepath.Join(root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	got := grepFiles(t, root, "", "needle", nil)
	want := []string{"a.txt", "ign/kept.txt", "norepo/b.txt", "repo/keep.gen", "repo/src/c.txt", "repo/src/x.gen"}
	if !slices.Equal(got, want) {
		t.Errorf("files %v\nwant  %v", got, want)
	}
	// Searching below the repository root still honours its .gitignore.
	if got := grepFiles(t, root, "repo/src", "needle", nil); !slices.Equal(got, []string{"repo/src/c.txt", "repo/src/x.gen"}) {
		t.Errorf("from a subdirectory: %v", got)
	}
	// A file named explicitly is searched even if hidden.
	if got := grepFiles(t, root, ".hidden.txt", "needle", nil); !slices.Equal(got, []string{".hidden.txt"}) {
		t.Errorf("explicit hidden file: %v", got)
	}
}

// TestSymlinksStayInside attacks confinement: links to a directory and a file
// outside the workspace are never followed by a walk, and a path argument
// through such a link is refused.
func TestSymlinksStayInside(t *testing.T) {
	outside := tree(t, map[string]string{"secret.txt": "needle secret\n", "d/s.txt": "needle\n"})
	root := tree(t, map[string]string{"in.txt": "needle\n"})
	for name, target := range map[string]string{"out-dir": filepath.Join(outside, "d"), "out-file": filepath.Join(outside, "secret.txt")} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	if got := grepFiles(t, root, "", "needle", nil); !slices.Equal(got, []string{"in.txt"}) {
		t.Errorf("the walk followed a link: %v", got)
	}
	env := envAt(t, root)
	for _, p := range []string{"out-dir", "out-file", outside, "../" + filepath.Base(outside), "/etc"} {
		r, _, _ := call(t, Grep(), env, map[string]any{"pattern": "needle", "path": p})
		if !r.IsError || !strings.Contains(r.TextOf(), "outside the workspace") {
			t.Errorf("grep in %s: %s", p, r.TextOf())
		}
		r, _, _ = call(t, Glob(), env, map[string]any{"pattern": "**", "path": p})
		if !r.IsError {
			t.Errorf("glob in %s: %s", p, r.TextOf())
		}
		r, _, _ = call(t, LS(), env, map[string]any{"path": p})
		if !r.IsError {
			t.Errorf("ls of %s: %s", p, r.TextOf())
		}
	}
	r, _, _ := call(t, Glob(), env, map[string]any{"pattern": outside + "/**"})
	if !r.IsError {
		t.Errorf("an absolute glob outside: %s", r.TextOf())
	}
	r, _, _ = call(t, Glob(), env, map[string]any{"pattern": "**/*.txt"})
	if strings.Contains(r.TextOf(), "secret") || strings.Contains(r.TextOf(), "s.txt") {
		t.Errorf("glob followed a link: %s", r.TextOf())
	}
	r, _, _ = call(t, LS(), env, map[string]any{})
	if strings.Contains(r.TextOf(), "out-") {
		t.Errorf("ls listed a link: %s", r.TextOf())
	}
}

// TestFifoDoesNotHang: a FIFO in the tree is skipped, not opened.
func TestFifoDoesNotHang(t *testing.T) {
	root := tree(t, map[string]string{"a.txt": "needle\n"})
	if err := mkfifo(filepath.Join(root, "pipe.txt")); err != nil {
		t.Skip("no mkfifo:", err)
	}
	if got := grepFiles(t, root, "", "needle", nil); !slices.Equal(got, []string{"a.txt"}) {
		t.Errorf("files %v", got)
	}
}
