package shellrule

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// word is a shell word whose value is known before bash runs it: quotes removed,
// nothing to expand but (maybe) a pathname pattern.
type word struct {
	value string
	// glob: an unquoted *, ? or [ makes bash replace the word by matching file names.
	glob bool
	// prefix is the value before the first unquoted pattern character.
	prefix string
}

// mayBeOption says whether bash could turn the word into something a program takes
// for an option: a literal "-x", or a pattern that may match a file named "-x"
// (`*` in a repository holding a file "--output=x").
func (w word) mayBeOption() bool {
	if w.glob {
		return w.prefix == "" || strings.HasPrefix(w.prefix, "-")
	}
	return strings.HasPrefix(w.value, "-")
}

// literal decodes w, or says in a user's words what bash would compute in it.
func literal(w *syntax.Word) (word, string) {
	// Brace expansion turns one word into several, so `{rm,-rf,x}` is a command and
	// `--ext{-diff,}` an option nobody could see.
	if hasBraceExpansion(w) {
		return word{}, "uses brace expansion ({a,b})"
	}
	if lit, ok := w.Parts[0].(*syntax.Lit); ok && dirStackTilde(lit.Value) {
		return word{}, "expands a directory (~+, ~-)"
	}
	var b strings.Builder
	var out word
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			unquoted(p.Value, &b, &out)
		case *syntax.SglQuoted:
			if p.Dollar {
				return word{}, "uses $'…' quoting"
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return word{}, `uses $"…" quoting`
			}
			for _, in := range p.Parts {
				lit, ok := in.(*syntax.Lit)
				if !ok {
					return word{}, expansionReason(in)
				}
				doubleQuoted(lit.Value, &b)
			}
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ArithmExp, *syntax.ProcSubst,
			*syntax.ExtGlob, *syntax.BraceExp:
			return word{}, expansionReason(part)
		default:
			return word{}, "has a word dsh does not understand"
		}
	}
	out.value = b.String()
	if !out.glob {
		out.prefix = out.value
	}
	return out, ""
}

// unquoted appends an unquoted literal's value, noting the first pattern character.
func unquoted(raw string, b *strings.Builder, w *word) {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '\\' && i+1 < len(raw):
			i++
			b.WriteByte(raw[i])
		case c == '*' || c == '?' || c == '[' && raw != "[":
			if !w.glob {
				w.glob = true
				w.prefix = b.String()
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
}

// doubleQuoted appends a double-quoted literal's value: there a backslash quotes
// only $ ` " \ and a newline.
func doubleQuoted(raw string, b *strings.Builder) {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == '\\' && i+1 < len(raw) && strings.IndexByte("$`\"\\\n", raw[i+1]) >= 0 {
			i++
			if raw[i] == '\n' {
				continue
			}
			c = raw[i]
		}
		b.WriteByte(c)
	}
}

// expansionReason names what bash computes in a word part.
func expansionReason(p syntax.WordPart) string {
	switch p := p.(type) {
	case *syntax.ParamExp:
		if p.Excl || p.Exp != nil && p.Exp.Op == syntax.OtherParamOps || p.Index != nil {
			return "expands a variable in a way that can evaluate code (${!x}, ${x@P}, ${a[i]})"
		}
		return "expands a variable ($" + paramName(p) + ")"
	case *syntax.CmdSubst:
		return "runs a command substitution ($(…))"
	case *syntax.ArithmExp:
		return "evaluates arithmetic ($((…))), which can run code hidden in variables"
	case *syntax.ProcSubst:
		return "uses process substitution (<(…))"
	case *syntax.ExtGlob:
		return "uses an extended pattern (@(…))"
	}
	return "has a word dsh does not understand"
}

func paramName(p *syntax.ParamExp) string {
	if p.Param != nil {
		return p.Param.Value
	}
	return "…"
}

// hasBraceExpansion: SplitBraces also splits words that bash leaves alone, such
// as `@{u}` or `{}`; only a BraceExp part in the result is an expansion.
func hasBraceExpansion(w *syntax.Word) bool {
	split := &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)}
	if !syntax.SplitBraces(split) {
		return false
	}
	for _, p := range split.Parts {
		if _, ok := p.(*syntax.BraceExp); ok {
			return true
		}
	}
	return false
}

// dirStackTilde: `~+`, `~-` and `~N` are $PWD, $OLDPWD and the directory stack,
// variables in disguise; a plain `~` (home) is left as a literal.
func dirStackTilde(s string) bool {
	rest, ok := strings.CutPrefix(s, "~")
	if !ok || rest == "" || rest[0] == '/' {
		return false
	}
	user, _, _ := strings.Cut(rest, "/")
	return strings.TrimLeft(user, "+-0123456789") == ""
}
