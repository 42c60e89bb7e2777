// Package shellrule decides, from the text of a shell command alone, whether an
// approval of it may be remembered and whether it is known to be read-only.
//
// The rule is an allow-list over bash's syntax: a command line qualifies only if
// every part of it is a plain program with literal arguments, joined by
// `&&`, `||`, `;`, `|` or grouped in `( )` / `{ }`. Anything bash computes before it
// runs a program (expansions, arithmetic, assignments, redirections to files,
// functions, control flow) and any program that runs its arguments or code given
// in them disqualifies the whole line: such a command is asked about every time.
// A command is judged by mvdan.cc/sh's bash parser; nothing is run.
package shellrule

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Verdict is what the approval rule says about one shell command line.
type Verdict struct {
	// Keys are the approvals this command needs, one per distinct simple command
	// it runs: the program as written, plus the subcommand for git, go, npm, cargo...
	// ("git status", "ls", "./build.sh"). Set only when Rememberable.
	Keys []string
	// Rememberable: every part is a plain program with literal arguments and none of
	// the refused constructs, so an "always allow" of Keys may be remembered and
	// reused for any command with the same keys.
	Rememberable bool
	// Safe: Rememberable and every part is in the table of known read-only commands
	// (or the user's additions), so it may run without asking.
	Safe bool
	// RunsGit: Safe, and some part may run git (git itself, the go command, or a
	// user's addition, which may run anything), so it needs the guard against a
	// repository's git config. Safe commands that run no git need none.
	RunsGit bool
	// Reason says, for a user, why the command is not rememberable: what it
	// "redirects output to a file (> out.txt)". Empty when Rememberable.
	Reason string
}

// Label is what an "always allow" of v remembers, for the prompt: "git status" or
// "git status, ls". The shell's own harmless words (echo, exit, true …) are
// remembered too but named only when nothing else is: the user decides about
// the programs. It is empty when v is not Rememberable.
func (v Verdict) Label() string {
	var out, quiet []string
	for _, k := range v.Keys {
		if e, ok := strings.CutPrefix(k, exactPrefix); ok {
			k = e + " (this exact command only)"
		}
		if quietBuiltins[k] {
			quiet = append(quiet, k)
			continue
		}
		out = append(out, k)
	}
	if len(out) == 0 {
		out = quiet
	}
	return strings.Join(out, ", ")
}

// quietBuiltins are shell builtins that change nothing a user decides about.
var quietBuiltins = map[string]bool{"echo": true, "printf": true, "exit": true, "true": true, "false": true, ":": true, "test": true, "[": true}

// Classify judges cmd. extraSafe are the user's additions to the safe table, each
// the words a command starts with ("make test", "just lint"); a command they match
// is still safe only if it is Rememberable.
func Classify(cmd string, extraSafe []string) Verdict {
	if strings.ContainsRune(cmd, 0) {
		return Verdict{Reason: "contains a NUL byte"} // bash and the parser could disagree where it ends
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		return Verdict{Reason: "does not parse as a bash command"}
	}
	c := checker{safe: true, seen: map[string]bool{}}
	for _, e := range extraSafe {
		if ws := strings.Fields(e); len(ws) > 0 {
			c.extra = append(c.extra, ws)
		}
	}
	c.stmts(f.Stmts)
	if c.reason == "" && len(c.keys) == 0 {
		c.reason = "runs no command"
	}
	if c.reason != "" {
		return Verdict{Reason: c.reason}
	}
	return Verdict{Keys: c.keys, Rememberable: true, Safe: c.safe, RunsGit: c.safe && c.runsGit}
}

// checker walks a parsed command line; the first refusal wins.
type checker struct {
	extra [][]string
	keys  []string
	seen  map[string]bool
	safe  bool
	// runsGit: a part that was found safe may run git.
	runsGit bool
	reason  string
	// calls are the words of each simple command, as bash will see them.
	calls [][]string
}

func (c *checker) refuse(reason string) {
	if c.reason == "" {
		c.reason = reason
	}
}

func (c *checker) stmts(ss []*syntax.Stmt) {
	for _, s := range ss {
		c.stmt(s)
	}
}

func (c *checker) stmt(s *syntax.Stmt) {
	if c.reason != "" {
		return
	}
	if s.Background || s.Coprocess || s.Disown {
		c.refuse("runs in the background (&)")
		return
	}
	for _, r := range s.Redirs {
		c.redirect(r)
	}
	if s.Cmd != nil {
		c.command(s.Cmd)
	}
}

func (c *checker) command(cmd syntax.Command) {
	switch x := cmd.(type) {
	case *syntax.CallExpr:
		c.call(x)
	case *syntax.BinaryCmd: // && || | |&
		c.stmt(x.X)
		c.stmt(x.Y)
	case *syntax.Block:
		c.stmts(x.Stmts)
	case *syntax.Subshell:
		c.stmts(x.Stmts)
	case *syntax.TestClause:
		c.test(x.X)
		c.key("[[")
	case *syntax.IfClause, *syntax.WhileClause, *syntax.ForClause, *syntax.CaseClause:
		c.refuse("uses shell control flow (if, for, while, case)")
	case *syntax.FuncDecl, *syntax.TestDecl:
		c.refuse("defines a shell function")
	case *syntax.ArithmCmd, *syntax.LetClause:
		c.refuse("evaluates arithmetic ((( … )), let), which can run code hidden in variables")
	case *syntax.DeclClause:
		c.refuse(namesVar + " (" + x.Variant.Value + ")")
	case *syntax.TimeClause:
		c.refuse(runsArgs + " (time)")
	case *syntax.CoprocClause:
		c.refuse(runsArgs + " (coproc)")
	default:
		c.refuse("has a construct dsh does not understand")
	}
}

// redirect allows what cannot touch a file: /dev/null, fd duplication and closing,
// and here-documents and here-strings with literal text.
func (c *checker) redirect(r *syntax.Redirect) {
	if r.N != nil && !isNumber(r.N.Value) {
		c.refuse("opens a file descriptor named by a variable ({fd}>)")
		return
	}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		if r.Hdoc == nil {
			return
		}
		for _, p := range r.Hdoc.Parts {
			if _, ok := p.(*syntax.Lit); !ok {
				c.refuse("has a here-document with expansions (" + expansionReason(p) + ")")
				return
			}
		}
	case syntax.WordHdoc:
		if _, why := literal(r.Word); why != "" {
			c.refuse("has a here-string that " + why)
		}
	case syntax.DplIn, syntax.DplOut:
		t, ok := c.target(r)
		if ok && !isNumber(strings.TrimSuffix(t, "-")) && t != "-" && (r.Op != syntax.DplOut || t != "/dev/null") {
			c.refuse("redirects output to a file (" + r.Op.String() + t + ")")
		}
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob,
		syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob:
		c.toFile(r, "redirects output to a file")
	case syntax.RdrIn:
		c.toFile(r, "redirects input from a file")
	case syntax.RdrInOut:
		c.toFile(r, "opens a file for writing")
	default:
		c.refuse("has a redirection dsh does not understand (" + r.Op.String() + ")")
	}
}

// toFile refuses a redirection that opens a file other than /dev/null.
func (c *checker) toFile(r *syntax.Redirect, what string) {
	if t, ok := c.target(r); ok && t != "/dev/null" {
		c.refuse(what + " (" + r.Op.String() + " " + t + ")")
	}
}

// target is the file name a redirection opens; ok is false (and the command
// refused) when bash computes it. A pattern keeps its * or ?, which bash would
// expand, so it is never taken for "/dev/null".
func (c *checker) target(r *syntax.Redirect) (string, bool) {
	w, why := literal(r.Word)
	if why != "" {
		c.refuse("redirects to a computed file name that " + why)
		return "", false
	}
	return w.value, true
}

func (c *checker) call(ce *syntax.CallExpr) {
	if len(ce.Assigns) > 0 {
		name := "…"
		if ce.Assigns[0].Name != nil {
			name = ce.Assigns[0].Name.Value
		}
		if len(ce.Args) == 0 {
			c.refuse("assigns a shell variable (" + name + "=…)")
		} else {
			c.refuse("has an assignment prefix (" + name + "=…)")
		}
		return
	}
	words := make([]word, len(ce.Args))
	for i, a := range ce.Args {
		w, why := literal(a)
		if why != "" {
			c.refuse(why)
			return
		}
		words[i] = w
	}
	vals := make([]string, len(words))
	for i, w := range words {
		vals[i] = w.value
	}
	c.calls = append(c.calls, vals)
	prog, args := words[0], words[1:]
	switch {
	case prog.glob:
		c.refuse("runs a program named by a pattern (" + prog.value + ")")
		return
	case !plainName(prog.value):
		c.refuse("runs a program with an unusual name (" + quote(prog.value) + ")")
		return
	}
	name := baseName(prog.value)
	rules := programRules()[name]
	for _, r := range rules {
		if arg, ok := r.match(args); ok {
			if arg != "" {
				c.refuse(r.what + " (" + name + " " + arg + ")")
			} else {
				c.refuse(r.what + " (" + name + ")")
			}
			return
		}
	}
	if rules != nil {
		// A rule above looked at the options; a pattern could hide one from it.
		for _, a := range args {
			if a.glob && a.mayBeOption() {
				c.refuse("has a pattern that may match a file named like an option (" + a.value + ")")
				return
			}
		}
	}
	key, why := keyOf(prog.value, args)
	if why != "" {
		c.refuse(why)
		return
	}
	c.key(key)
	if c.safe && !c.isSafe(prog.value, args) {
		c.safe = false
	}
}

func (c *checker) key(k string) {
	if !c.seen[k] {
		c.seen[k] = true
		c.keys = append(c.keys, k)
	}
}

// test allows [[ ]] on literal words, except the operators that make bash
// evaluate an operand as code: -v and -R take a variable name, which may carry a
// subscript, and arithmetic comparisons evaluate both sides as expressions.
func (c *checker) test(x syntax.TestExpr) {
	switch t := x.(type) {
	case *syntax.Word:
		if _, why := literal(t); why != "" {
			c.refuse(why)
		}
	case *syntax.UnaryTest:
		if t.Op == syntax.TsVarSet || t.Op == syntax.TsRefVar {
			c.refuse(namesVar + " ([[ " + t.Op.String() + " ]])")
			return
		}
		c.test(t.X)
	case *syntax.BinaryTest:
		switch t.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			if !isIntegerWord(t.X) || !isIntegerWord(t.Y) {
				c.refuse("compares arithmetically in [[ ]], which evaluates its operands as code ([[ x " + t.Op.String() + " y ]])")
				return
			}
		case syntax.TsReMatch, syntax.TsNewer, syntax.TsOlder, syntax.TsDevIno, syntax.AndTest, syntax.OrTest,
			syntax.TsMatchShort, syntax.TsMatch, syntax.TsNoMatch, syntax.TsBefore, syntax.TsAfter:
		}
		c.test(t.X)
		c.test(t.Y)
	case *syntax.ParenTest:
		c.test(t.X)
	default:
		c.refuse("has a test dsh does not understand")
	}
}

// subcommanded are programs whose first argument names what they do, so "always
// allow" covers `git status` but not `git push`.
var subcommanded = map[string]bool{
	"git": true, "go": true, "npm": true, "pnpm": true, "yarn": true, "bun": true,
	"npx": true, "cargo": true, "make": true, "docker": true, "kubectl": true,
	"pip": true, "pip3": true, "uv": true, "gh": true, "dotnet": true, "mvn": true,
	"gradle": true, "deno": true, "just": true, "poetry": true, "rustup": true,
}

// destructive are programs (and git's subcommands) whose approval is of one
// exact command: "always allow rm" would let the model delete anything, so
// "always" of `rm -rf build` remembers `rm -rf build` only.
var destructive = map[string]bool{
	"rm": true, "rmdir": true, "mv": true, "dd": true, "shred": true, "truncate": true, "unlink": true,
	"chmod": true, "chown": true, "chgrp": true, "mkfs": true, "wipefs": true, "fdisk": true, "kill": true,
	"pkill": true, "killall": true, "git push": true, "git reset": true, "git clean": true, "git checkout": true,
	"git restore": true, "git rebase": true, "git branch": true, "git stash": true, "git rm": true, "git mv": true,
	"git update-ref": true, "git gc": true, "git prune": true, "git reflog": true,
}

// exactKey is the key of one exact command: its program and every argument,
// each quoted when it holds anything but plain characters, so that two
// commands share a key only when they are the same command.
func exactKey(prog string, args []word) string {
	parts := []string{prog}
	for _, a := range args {
		v := a.value
		if !plainName(v) || strings.ContainsAny(v, `"'\*?[]{}$`+"`") {
			v = strconv.Quote(v)
		}
		parts = append(parts, v)
	}
	return strings.Join(parts, " ")
}

// keyOf is the approval key of one simple command.
func keyOf(prog string, args []word) (string, string) {
	name := baseName(prog)
	if k, why := subKey(prog, args); why != "" || !destructive[name] && !destructive[strings.TrimPrefix(k, prog+" ")] &&
		!destructive[name+" "+subcommand(name, args)] {
		return k, why
	}
	return exactPrefix + exactKey(prog, args), ""
}

// exactPrefix marks a key that names one exact command.
const exactPrefix = "exactly: "

// subKey is the key of one simple command by program and subcommand.
func subKey(prog string, args []word) (string, string) {
	name := baseName(prog)
	if !subcommanded[name] {
		return prog, ""
	}
	i := subcommandIndex(name, args)
	if i < 0 {
		return prog, ""
	}
	sub := args[i]
	switch {
	case sub.glob:
		return "", "names its subcommand by a pattern (" + name + " " + sub.value + ")"
	case !plainName(sub.value):
		return "", "has an unusual subcommand (" + quote(sub.value) + ")"
	case strings.HasPrefix(sub.value, "-"):
		if i == len(args)-1 { // a lone option: `go version`'s sibling `git --version`
			return prog + " " + sub.value, ""
		}
		return "", "passes options to " + name + " before its subcommand (" + name + " " + sub.value + ")"
	}
	return prog + " " + sub.value, ""
}

// subcommandIndex is where a subcommanded program's subcommand is in args, past
// git's harmless --no-pager; -1 when there is none.
func subcommandIndex(name string, args []word) int {
	i := 0
	if name == "git" {
		for i < len(args) && args[i].value == "--no-pager" {
			i++
		}
	}
	if i >= len(args) {
		return -1
	}
	return i
}

// subcommand is a subcommanded program's subcommand, or "".
func subcommand(name string, args []word) string {
	if i := subcommandIndex(name, args); i >= 0 {
		return args[i].value
	}
	return ""
}

// plainName: a name that prints as itself in a prompt and a key ("git status, ls"
// must not be one program called "git status, ls").
func plainName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r == ',' || r == 0x7f || r >= 0x80 {
			return false
		}
	}
	return true
}

func quote(s string) string { return "\"" + strings.ToValidUTF8(s, "?") + "\"" }

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func isIntegerWord(x syntax.TestExpr) bool {
	w, ok := x.(*syntax.Word)
	if !ok {
		return false
	}
	lit, why := literal(w)
	if why != "" || lit.glob {
		return false
	}
	return isNumber(strings.TrimLeft(lit.value, "+-"))
}
