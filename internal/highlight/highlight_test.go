package highlight

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers" // the reference, in tests only
)

// plainText are the read tool's languages whose chroma lexer is Go code with no XML
// definition: they are shown without highlighting.
var plainText = []string{"markdown", "rst", "svelte"}

// remapped are languages whose chroma lexer is the XML definition plus Go code that
// retypes some words (emacs.go marks Emacs Lisp's builtins); here they get the
// XML definition alone.
var remapped = []string{"emacs-lisp"}

// readLangs returns the language ids of the read tool's extension table.
func readLangs(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../tool/fs/present_read.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var langs []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || vs.Names[0].Name != "langByExt" {
			return true
		}
		for _, el := range vs.Values[0].(*ast.CompositeLit).Elts {
			b := el.(*ast.KeyValueExpr).Value.(*ast.BasicLit)
			s, err := strconv.Unquote(b.Value)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(langs, s) {
				langs = append(langs, s)
			}
		}
		return false
	})
	if len(langs) < 40 {
		t.Fatalf("found %d languages in the read tool's table; has it moved?", len(langs))
	}
	return langs
}

// sample touches what most lexers know: comments, strings, numbers, markup,
// an embedded script and style (delegated by HTML), and an unterminated string.
const sample = "#!/bin/sh\n# comment\n// comment\n/* block\n   comment */\n-- comment\n" +
	"<html><head><style>a { color: red }</style><script>var x = 1; // js\n</script></head>\n" +
	"<p class=\"x\">text &amp; more</p></html>\n" +
	"def f(x):\n    return 'str' + \"str\" + 42 + 0x1F + 3.14 # done\n" +
	"[section]\nkey = value\n{\"a\": [1, true, null]}\n" +
	"func main() { fmt.Println(`raw\nstring`) }\n" +
	"SELECT * FROM t WHERE a = 'b';\n\t\"unterminated\n"

// Every language id the read tool produces resolves to the lexer chroma itself
// would pick, and tokenises exactly as chroma's full registry does; the few
// without an XML definition are plain text.
func TestEveryReadLanguage(t *testing.T) {
	for _, lang := range readLangs(t) {
		t.Run(lang, func(t *testing.T) {
			t.Parallel() // lexers compile lazily; this runs that concurrently
			got, ok := Tokens(lang, sample)
			if slices.Contains(plainText, lang) {
				if ok {
					t.Fatalf("%s is listed as plain text but has a lexer", lang)
				}
				return
			}
			if !ok {
				t.Fatalf("no tokens for %s", lang)
			}
			ref := lexers.Get(lang)
			if ref == nil {
				t.Fatalf("chroma has no lexer for %s", lang)
			}
			if name := lexer(lang).Config().Name; name != ref.Config().Name {
				t.Fatalf("lexer %q, chroma picks %q", name, ref.Config().Name)
			}
			if lang == "go" || slices.Contains(remapped, lang) {
				return // go/scanner, checked by TestGoTokens; or retyped by chroma's Go code
			}
			it, err := chroma.Coalesce(ref).Tokenise(&chroma.TokeniseOptions{State: "root"}, sample)
			if err != nil {
				t.Fatal(err)
			}
			want := it.Tokens()
			if n := len(want); n > 0 && !strings.HasSuffix(sample, "\n") {
				want[n-1].Value = strings.TrimSuffix(want[n-1].Value, "\n")
			}
			if !slices.Equal(got, want) {
				t.Errorf("tokens differ from chroma's:\n got %v\nwant %v", got, want)
			}
		})
	}
}

func TestUnknownLanguage(t *testing.T) {
	for _, lang := range []string{"", "no-such-language"} {
		if tokens, ok := Tokens(lang, "x"); ok || tokens != nil {
			t.Errorf("Tokens(%q) = %v, %v; want plain", lang, tokens, ok)
		}
	}
}

// Highlighting never changes the text: when Tokens says ok, the tokens add up to
// the input, byte for byte, for every language and awkward input. Valid UTF-8
// must always tokenise.
func TestTokensKeepText(t *testing.T) {
	inputs := []string{
		"", "\n", "x", "no newline at end", "\n\nleading and trailing\n\n",
		"crlf\r\nline\r\n", "lone\rcr", "\ttabs\t\tand  spaces  ", "\ufeffbom first",
		"unicode: héllo wörld — 日本語 🎉\n", "/* unterminated comment\nstill",
		"`unterminated raw\nstring", "\"unterminated", "'", "<", "<!--", "<<EOF\nheredoc\n",
		sample,
	}
	invalid := "bad utf8 \xff\xfe here\n"
	langs := append(readLangs(t), "golang")
	for _, lang := range langs {
		for _, in := range append(inputs, invalid) {
			tokens, ok := Tokens(lang, in)
			if !ok {
				if in != invalid && !slices.Contains(plainText, lang) {
					t.Errorf("%s: %q did not tokenise", lang, in)
				}
				continue
			}
			var b strings.Builder
			for _, tk := range tokens {
				b.WriteString(tk.Value)
			}
			if b.String() != in {
				t.Errorf("%s: tokens of %q add up to %q", lang, in, b.String())
			}
		}
	}
}

// A construct spanning lines is one token, split at line ends with its type on
// every line: a block comment and a raw string in Go, a triple-quoted string in
// Python.
func TestMultiLineConstructs(t *testing.T) {
	cases := []struct {
		lang, src string
		line      int
		want      chroma.TokenType
	}{
		{"go", "x := 1 /* a\nb\nc */ + 2", 1, chroma.CommentMultiline},
		{"go", "x := 1 /* a\nb\nc */ + 2", 2, chroma.CommentMultiline},
		{"go", "s := `one\ntwo`\n", 1, chroma.LiteralString},
		{"python", "s = '''one\ntwo\nthree'''\n", 1, chroma.LiteralStringSingle},
		{"javascript", "x = 1; /* a\nb */ y = 2;\n", 1, chroma.CommentMultiline},
	}
	for _, c := range cases {
		tokens, ok := Tokens(c.lang, c.src)
		if !ok {
			t.Fatalf("%s: no tokens", c.lang)
		}
		lines := chroma.SplitTokensIntoLines(tokens)
		if c.line >= len(lines) || len(lines[c.line]) == 0 {
			t.Fatalf("%s %q: no line %d in %v", c.lang, c.src, c.line, lines)
		}
		if first := lines[c.line][0]; first.Type != c.want {
			t.Errorf("%s %q: line %d starts with %v, want %v", c.lang, c.src, c.line, first, c.want)
		}
	}
}
