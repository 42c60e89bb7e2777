package shellrule

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Calls are the words of each simple command cmd runs, as bash will see
// them (quotes removed), for matching against rules such as Claude Code's
// "Bash(git add:*)"; ok is false unless cmd is Rememberable — every part a
// plain program with literal arguments — so no `;`, `$(…)` or redirection
// can hide a command the words do not show.
func Calls(cmd string) (calls [][]string, ok bool) {
	if strings.ContainsRune(cmd, 0) {
		return nil, false
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		return nil, false
	}
	c := checker{safe: true, seen: map[string]bool{}}
	c.stmts(f.Stmts)
	if c.reason != "" || len(c.calls) == 0 {
		return nil, false
	}
	return c.calls, true
}
