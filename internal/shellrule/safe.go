package shellrule

import (
	"slices"
	"strings"
)

// safeEntry is one known read-only command: the words it starts with, and what in
// its arguments would make it write a file or run a program. Options refused for
// remembering (programs.go: printf -v, sort -o, find -exec, git --output, rg --pre,
// go env -w...) never reach this table, so an entry lists only what is left.
type safeEntry struct {
	cmd   string
	deny  options
	allow func(args []word) bool // nil: any arguments
}

// gitDiffDeny: options of git's diff machinery that run a configured program or
// write a file.
var gitDiffDeny = options{long: []string{"--ext-diff", "--textconv"}, exceptLong: []string{"--text"}}

// safeTable is every command that runs without asking in the default and
// accept-edits modes (with the user's additions). One test per entry proves an
// allowed call and a refused variant.
var safeTable = []safeEntry{
	{cmd: "ls"},
	{cmd: "pwd"},
	{cmd: "cat"},
	{cmd: "head"},
	{cmd: "tail"},
	{cmd: "wc"},
	{cmd: "file", deny: options{short: "C", long: []string{"--compile"}}}, // -C writes magic.mgc
	{cmd: "stat"},
	{cmd: "du"},
	{cmd: "grep"}, // GNU grep can neither write a file nor run a program
	// rg -z runs decompression programs on what it searches.
	{cmd: "rg", deny: options{short: "z", exact: []string{"--search-zip", "--pre-glob"}}},
	{cmd: "find"},
	{cmd: "git status"},
	{cmd: "git log", deny: gitDiffDeny},
	{cmd: "git diff", deny: gitDiffDeny},
	{cmd: "git show", deny: gitDiffDeny},
	{cmd: "git branch", allow: gitBranchLists},
	{cmd: "git rev-parse"},
	{cmd: "git ls-files"},
	{cmd: "git blame", deny: options{long: []string{"--textconv"}}},
	// -export and -compiled build packages (cgo runs the C toolchain); -mod=mod
	// rewrites go.mod.
	{cmd: "go list", deny: options{goFlags: []string{"export", "compiled", "mod", "modfile"}}},
	{cmd: "go env"},
	{cmd: "go version"},
	{cmd: "echo"},
	{cmd: "printf"},
	{cmd: "test"},
	{cmd: "["},
	{cmd: "sort"},
	{cmd: "uniq", allow: uniqNoOutput},
	{cmd: "cut"},
	{cmd: "tr"},
}

// isSafe says whether one simple command, already found rememberable, is in the
// safe table or the user's additions.
func (c *checker) isSafe(prog string, args []word) bool {
	if strings.Contains(prog, "/") {
		return false // ./ls is the repository's program, not ls
	}
	for _, a := range args {
		if a.glob && a.mayBeOption() {
			return false // `rg x *` with a file named --pre=./evil
		}
	}
	for _, a := range args {
		if reachesOut(a.value) {
			return false // `cat ~/.ssh/id_rsa`, `grep KEY /proc/1/environ`
		}
	}
	if prog == "go" && slices.ContainsFunc(args, func(a word) bool { return strings.Contains(a.value, "@") }) {
		return false // `go list -m example.com/SECRET@latest` asks the module proxy
	}
	words := []string{prog}
	for i, a := range args {
		if prog == "git" && i < subcommandIndex("git", args) {
			continue // --no-pager
		}
		words = append(words, a.value)
	}
	for _, e := range c.extra {
		if len(words) >= len(e) && slices.Equal(words[:len(e)], e) {
			c.runsGit = true // a user's addition ("make test") may run anything
			return true
		}
	}
	if prog == "git" || prog == "go" {
		c.runsGit = true
	}
	for _, e := range safeTable {
		n := strings.Count(e.cmd, " ") + 1
		if len(words) < n || strings.Join(words[:n], " ") != e.cmd {
			continue
		}
		rest := args[len(args)-(len(words)-n):]
		return e.deny.find(rest) == "" && (e.allow == nil || e.allow(rest))
	}
	return false
}

// gitBranchLists: `git branch` only lists with these options; any other option
// deletes, renames, copies or configures branches, and a bare name creates one.
func gitBranchLists(args []word) bool {
	flags := []string{"-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "-l", "--list",
		"--show-current", "--color", "--no-color", "--column", "--no-column", "-i", "--ignore-case",
		"--no-abbrev", "--abbrev", "--sort", "--format", "--omit-empty"}
	// These take a commit and make the arguments patterns of the branches to list.
	listing := []string{"--contains", "--no-contains", "--merged", "--no-merged", "--points-at"}
	list, positional := false, false
	for i := 0; i < len(args); i++ {
		a := args[i].value
		name, _, hasValue := strings.Cut(a, "=")
		switch {
		case a == "-l" || a == "--list":
			list = true
		case slices.Contains(listing, name):
			list = true
			if !hasValue && i+1 < len(args) {
				i++
			}
		case name == "--sort" || name == "--format":
			if !hasValue {
				i++
			}
		case slices.Contains(flags, name):
		case len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.Trim(a[1:], "arvil") == "":
			list = list || strings.Contains(a, "l")
		case strings.HasPrefix(a, "-"):
			return false
		default:
			positional = true
		}
	}
	return list || !positional
}

// uniqNoOutput: uniq's second file argument is the file it writes.
func uniqNoOutput(args []word) bool {
	files := 0
	for i := 0; i < len(args); i++ {
		a := args[i].value
		switch {
		case a == "--":
			files += len(args) - i - 1
			i = len(args)
		case a == "-f" || a == "-s" || a == "-w" ||
			a == "--skip-fields" || a == "--skip-chars" || a == "--check-chars":
			i++ // the option's number
		case a == "-" || !strings.HasPrefix(a, "-"):
			files++
		}
	}
	return files <= 1
}

// reachesOut says whether an argument (or an option's value after "=") names a
// path that may lead out of the workspace: absolute, from a home directory, or
// up through "..". The safe table vouches for what a command does, not for
// what it reads; secrets live outside the workspace (~/.ssh, /proc/*/environ).
// /dev/null and "-" are no files.
func reachesOut(arg string) bool {
	for _, v := range []string{arg, afterEquals(arg)} {
		switch {
		case v == "" || v == "/dev/null":
		case strings.HasPrefix(v, "/"), strings.HasPrefix(v, "~"):
			return true
		case v == ".." || strings.HasPrefix(v, "../") || strings.Contains(v, "/../") || strings.HasSuffix(v, "/.."):
			return true
		}
	}
	return false
}

func afterEquals(arg string) string {
	if !strings.HasPrefix(arg, "-") {
		return ""
	}
	_, v, _ := strings.Cut(arg, "=")
	return v
}
