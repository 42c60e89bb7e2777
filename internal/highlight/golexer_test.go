package highlight

import (
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
)

func TestGoTokens(t *testing.T) {
	type tk = chroma.Token
	var (
		ws   = func(s string) tk { return tk{Type: chroma.TextWhitespace, Value: s} }
		punc = func(s string) tk { return tk{Type: chroma.Punctuation, Value: s} }
		op   = func(s string) tk { return tk{Type: chroma.Operator, Value: s} }
		name = func(s string) tk { return tk{Type: chroma.NameOther, Value: s} }
	)
	cases := []struct {
		src  string
		want []tk
	}{
		{"package demo\n", []tk{{Type: chroma.KeywordNamespace, Value: "package"}, ws(" "), name("demo"), ws("\n")}},
		{"import \"fmt\"", []tk{{Type: chroma.KeywordNamespace, Value: "import"}, ws(" "), {Type: chroma.LiteralString, Value: `"fmt"`}}},
		{"func Greet(name string) error {", []tk{
			{Type: chroma.KeywordDeclaration, Value: "func"}, ws(" "), {Type: chroma.NameFunction, Value: "Greet"}, punc("("),
			name("name"), ws(" "), {Type: chroma.KeywordType, Value: "string"}, punc(")"), ws(" "),
			{Type: chroma.KeywordType, Value: "error"}, ws(" "), punc("{"),
		}},
		{"if n := len(s); n == 0 && ok {", []tk{
			{Type: chroma.Keyword, Value: "if"}, ws(" "), name("n"), ws(" "), op(":="), ws(" "),
			{Type: chroma.NameBuiltin, Value: "len"}, punc("("), name("s"), punc(");"), ws(" "),
			name("n"), ws(" "), op("=="), ws(" "), {Type: chroma.LiteralNumberInteger, Value: "0"}, ws(" "),
			op("&&"), ws(" "), name("ok"), ws(" "), punc("{"),
		}},
		{"x = []byte(s)[0x1F] + 'c' + 1.5e3 + 2i + 0o17 + 0b1 + nil", []tk{
			name("x"), ws(" "), op("="), ws(" "), punc("[]"), {Type: chroma.NameBuiltin, Value: "byte"},
			punc("("), name("s"), punc(")["), {Type: chroma.LiteralNumberHex, Value: "0x1F"}, punc("]"),
			ws(" "), op("+"), ws(" "), {Type: chroma.LiteralStringChar, Value: "'c'"}, ws(" "), op("+"), ws(" "),
			{Type: chroma.LiteralNumberFloat, Value: "1.5e3"}, ws(" "), op("+"), ws(" "),
			{Type: chroma.LiteralNumber, Value: "2i"}, ws(" "), op("+"), ws(" "),
			{Type: chroma.LiteralNumberOct, Value: "0o17"}, ws(" "), op("+"), ws(" "),
			{Type: chroma.LiteralNumberBin, Value: "0b1"}, ws(" "), op("+"), ws(" "),
			{Type: chroma.KeywordConstant, Value: "nil"},
		}},
		{"fmt.Println (x) // note\n//go:build linux", []tk{
			name("fmt"), punc("."), {Type: chroma.NameFunction, Value: "Println"}, ws(" "), punc("("), name("x"),
			punc(")"), ws(" "), {Type: chroma.CommentSingle, Value: "// note"}, ws("\n"),
			{Type: chroma.CommentPreproc, Value: "//go:build linux"},
		}},
		{"s := `a\r\nb` /* c\r\nd */ @", []tk{
			name("s"), ws(" "), op(":="), ws(" "), {Type: chroma.LiteralString, Value: "`a\r\nb`"}, ws(" "),
			{Type: chroma.CommentMultiline, Value: "/* c\r\nd */"}, ws(" "), {Type: chroma.Error, Value: "@"},
		}},
		{"\ufeffvar x", []tk{{Type: chroma.Text, Value: "\ufeff"}, {Type: chroma.KeywordDeclaration, Value: "var"}, ws(" "), name("x")}},
	}
	for _, c := range cases { // adjacent tokens of one type are merged
		got, ok := Tokens("go", c.src)
		if !ok {
			t.Errorf("%q: not tokenised", c.src)
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q:\n got %v\nwant %v", c.src, got, c.want)
		}
	}
}

// The Go tokens always add up to the source, whatever it is.
func FuzzGoTokens(f *testing.F) {
	for _, s := range []string{"", "package x", "/* open", "`open", "\"open\n", "\xff\xfe", "a\r\nb", sample} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		var b strings.Builder
		for _, tk := range goTokens(src) {
			if tk.Value == "" {
				t.Fatal("empty token")
			}
			b.WriteString(tk.Value)
		}
		if b.String() != src {
			t.Fatalf("tokens of %q add up to %q", src, b.String())
		}
	})
}
