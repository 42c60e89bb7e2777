package shellrule

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Run is one program a command line may run: the words it starts with, as bash
// will see them, its name without a directory (/bin/rm is rm). Cut says words
// follow that bash computes ($X, $(…), a pattern), which no rule can read.
type Run struct {
	Words []string
	Cut   bool
}

// maxDepth bounds the scripts inside scripts (bash -c '…', eval) Runs reads.
const maxDepth = 4

// Runs lists every program cmd may run, for deny rules, which must hold
// whatever hides the program: inside $(…), subshells, pipelines, functions,
// `bash -c '…'` and `eval`, behind wrappers such as env, sudo, nice, timeout
// and xargs, and in find's -exec. A wrapper is listed itself and with what it
// runs. known is false when a program's name is computed ($PROG, $(…), a
// pattern) or a script does not parse: then no rule can say what runs.
func Runs(cmd string) (runs []Run, known bool) {
	r := runner{known: true}
	r.line(cmd, 0)
	return r.out, r.known
}

type runner struct {
	out   []Run
	known bool
}

func (r *runner) line(cmd string, depth int) {
	if depth > maxDepth || strings.ContainsRune(cmd, 0) {
		r.known = false
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		r.known = false
		return
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if ce, ok := n.(*syntax.CallExpr); ok && len(ce.Args) > 0 {
			words, cut := literalWords(ce.Args)
			if len(words) == 0 {
				r.known = false // the program's name is computed
				return true
			}
			r.call(words, cut, depth)
		}
		return true
	})
}

// literalWords are the words of args up to the first that bash computes.
func literalWords(args []*syntax.Word) (words []string, cut bool) {
	for _, a := range args {
		w, why := literal(a)
		if why != "" || w.glob {
			return words, true
		}
		words = append(words, w.value)
	}
	return words, false
}

// call lists the program of words and, behind a wrapper, what it runs.
func (r *runner) call(words []string, cut bool, depth int) {
	if words[0] != "" {
		words[0] = path.Base(words[0])
	}
	r.out = append(r.out, Run{Words: words, Cut: cut})
	prog, args := words[0], words[1:]
	switch prog {
	case "bash", "sh", "zsh", "dash", "ksh", "fish":
		for i, a := range args {
			if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c") {
				if i+1 < len(args) {
					r.line(args[i+1], depth+1)
				} else if cut {
					r.known = false
				}
				return
			}
		}
	case "eval":
		if cut {
			r.known = false
		}
		r.line(strings.Join(args, " "), depth+1)
	case "find":
		for i, a := range args {
			if a == "-exec" || a == "-execdir" || a == "-ok" || a == "-okdir" {
				end := i + 1
				for end < len(args) && args[end] != ";" && args[end] != "+" {
					end++
				}
				if end > i+1 {
					r.call(append([]string(nil), args[i+1:end]...), cut && end == len(args), depth)
				} else if cut {
					r.known = false
				}
			}
		}
	default:
		skip, ok := wrappers[prog]
		if !ok {
			return
		}
		rest := unwrap(args, skip, prog == "env")
		if len(rest) > 0 && slices.Contains(positional, prog) {
			rest = rest[1:] // timeout's duration, chrt's priority, taskset's mask
		}
		switch {
		case len(rest) == 0:
			if cut {
				r.known = false // what it runs is computed
			}
		case prog == "watch": // runs its words as a shell line
			if cut {
				r.known = false
			}
			r.line(strings.Join(rest, " "), depth+1)
		default:
			r.call(append([]string(nil), rest...), cut, depth)
		}
	}
}

// wrappers are programs that run the command their arguments name, with
// their options that take a value of their own.
var wrappers = map[string][]string{
	"command": nil, "builtin": nil, "exec": {"-a"}, "nohup": nil, "time": nil, "setsid": nil,
	"env":     {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"},
	"sudo":    {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "--user", "--group"},
	"doas":    {"-u", "-C"},
	"nice":    {"-n", "--adjustment"},
	"ionice":  {"-c", "-n", "-p", "-P", "-u"},
	"timeout": {"-s", "--signal", "-k", "--kill-after"},
	"stdbuf":  {"-i", "-o", "-e"},
	"xargs":   {"-a", "-d", "-E", "-e", "-I", "-i", "-L", "-l", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-args", "--max-procs", "--replace"},
	"chrt":    nil, "taskset": nil, "unbuffer": nil, "caffeinate": nil, "watch": {"-n", "--interval"},
}

// positional are the wrappers with one value before the command.
var positional = []string{"timeout", "chrt", "taskset"}

// unwrap drops a wrapper's options (and their values), env's NAME=VALUE
// words, and timeout's duration, leaving the command it runs.
func unwrap(args, valued []string, env bool) []string {
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "--":
			return args[1:]
		case strings.HasPrefix(a, "-") && a != "-":
			args = args[1:]
			if !strings.Contains(a, "=") && slices.Contains(valued, a) && len(args) > 0 {
				args = args[1:]
			}
		case env && strings.Contains(a, "="):
			args = args[1:]
		default:
			return args
		}
	}
	return args
}
