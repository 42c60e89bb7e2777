// Package highlight tokenises source code for syntax highlighting, for the
// languages the read tool names (internal/tool/fs langByExt).
//
// It does not import chroma's lexers package: that package's init parses all of
// its ~280 lexer definitions, about 10 ms and 2.7 MB on every dsh start-up. Instead
// the definitions dsh needs are copied from the chroma module into lexers/ by
// `go generate` (see gen/) and loaded on first use with chroma's own XML loader.
// Go, whose chroma lexer is Go code, is tokenised with go/scanner. Languages whose
// chroma lexer is Go code without an XML definition (markdown, rst, svelte) are
// shown as plain text.
package highlight

//go:generate go run ./gen

import (
	"embed"
	"io/fs"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

// defs are chroma's XML lexer definitions, © Alec Thomas, MIT (lexers/COPYING).
//
//go:embed lexers/*.xml
var defs embed.FS

// registry holds every lexer, so that one delegating to another by name (HTML to
// CSS and JavaScript) finds it. Registering reads only each definition's config;
// a lexer's rules are parsed and compiled when it first tokenises.
var registry = sync.OnceValue(func() *chroma.LexerRegistry {
	reg := chroma.NewLexerRegistry()
	paths, err := fs.Glob(defs, "lexers/*.xml")
	if err != nil {
		panic(err) // the pattern is valid
	}
	for _, p := range paths {
		reg.Register(chroma.MustNewXMLLexer(defs, p)) // the definitions are tested
	}
	reg.Register(goLexer{})
	return reg
})

// lexer returns the lexer for a language id, alias or file extension, or nil.
func lexer(lang string) chroma.Lexer {
	if lang == "" {
		return nil
	}
	return registry().Get(lang)
}

// Tokens tokenises text as the language lang, merging adjacent tokens of one type.
// ok is false when lang has no lexer or tokenising failed; the caller shows the
// text plain. When ok, the tokens' values concatenate to exactly text.
func Tokens(lang, text string) (tokens []chroma.Token, ok bool) {
	l := lexer(lang)
	if l == nil {
		return nil, false
	}
	// EnsureLF off: a CR stays in the text rather than becoming a newline.
	it, err := chroma.Coalesce(l).Tokenise(&chroma.TokeniseOptions{State: "root"}, text)
	if err != nil {
		return nil, false
	}
	tokens = it.Tokens()
	var b strings.Builder
	for _, t := range tokens {
		b.WriteString(t.Value)
	}
	got := b.String()
	// A lexer that wants a final newline (ensure_nl) may emit the one it added.
	if n := len(tokens); len(got) == len(text)+1 && got[:len(text)] == text && strings.HasSuffix(tokens[n-1].Value, "\n") {
		tokens[n-1].Value = strings.TrimSuffix(tokens[n-1].Value, "\n")
		if tokens[n-1].Value == "" {
			tokens = tokens[:n-1]
		}
		got = text
	}
	if got != text {
		return nil, false
	}
	return tokens, true
}
