package shellrule

import (
	"slices"
	"strings"
)

// options says which options of a program a rule is about, in the syntax that
// program parses. A rule matches over-broadly rather than miss a spelling: a false
// match only means the user is asked.
type options struct {
	// long are GNU-style long options ("--output"), matched with or without "=value"
	// and by any prefix, since getopt_long and git accept unambiguous abbreviations
	// (`sort --out=f` is `sort --output=f`).
	long []string
	// exceptLong are real options that are prefixes of a long one ("--text" for
	// git's "--textconv"), so are not abbreviations of it.
	exceptLong []string
	// exact are options matched whole, with or without "=value": find's "-exec",
	// rg's "--pre" (rg takes no abbreviations).
	exact []string
	// short are single-letter options, found in bundles too ("-ro" holds "o").
	short string
	// goFlags are Go flag-package flags: one or two dashes, "=value" allowed.
	goFlags []string
}

// find returns the first argument that is one of the options, or "".
func (o options) find(args []word) string {
	for _, a := range args {
		if o.matches(a.value) {
			return a.value
		}
	}
	return ""
}

func (o options) matches(arg string) bool {
	name, _, _ := strings.Cut(arg, "=")
	for _, e := range o.exact {
		if name == e {
			return true
		}
	}
	if strings.HasPrefix(arg, "--") && len(name) > 2 {
		for _, l := range o.long {
			if strings.HasPrefix(l, name) && !slices.Contains(o.exceptLong, name) {
				return true
			}
		}
	}
	if o.short != "" && len(arg) > 1 && arg[0] == '-' && arg[1] != '-' &&
		strings.ContainsAny(arg[1:], o.short) {
		return true
	}
	if flag, ok := strings.CutPrefix(name, "-"); ok {
		flag = strings.TrimPrefix(flag, "-")
		if slices.Contains(o.goFlags, flag) {
			return true
		}
	}
	return false
}
