package highlight

import (
	"go/scanner"
	"go/token"
	"strings"

	"github.com/alecthomas/chroma/v2"
)

// goLexer tokenises Go with the standard library's scanner, classifying tokens as
// chroma's own Go lexer does, so styles apply unchanged. The text of every token is
// sliced from the source, so the tokens always add up to it.
type goLexer struct{}

var goConfig = &chroma.Config{Name: "Go", Aliases: []string{"go", "golang"}, Filenames: []string{"*.go"}}

func (goLexer) Config() *chroma.Config                           { return goConfig }
func (l goLexer) SetRegistry(*chroma.LexerRegistry) chroma.Lexer { return l }
func (l goLexer) SetAnalyser(func(string) float32) chroma.Lexer  { return l }
func (goLexer) AnalyseText(string) float32                       { return 0 }
func (goLexer) Tokenise(_ *chroma.TokeniseOptions, text string) (chroma.Iterator, error) {
	return chroma.Literator(goTokens(text)...), nil
}

// goLexeme is a token the scanner found at offset off.
type goLexeme struct {
	off int
	tok token.Token
	lit string
}

func goTokens(src string) []chroma.Token {
	var lexemes []goLexeme
	var s scanner.Scanner
	fset := token.NewFileSet()
	file := fset.AddFile("", -1, len(src))
	s.Init(file, []byte(src), nil, scanner.ScanComments) // errors: scan on, tokens stay
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.SEMICOLON && lit == "\n" { // inserted, not in the text
			continue
		}
		lexemes = append(lexemes, goLexeme{file.Offset(pos), tok, lit})
	}

	var out []chroma.Token
	emit := func(t chroma.TokenType, v string) {
		if v != "" {
			out = append(out, chroma.Token{Type: t, Value: v})
		}
	}
	at := 0 // the text before at is emitted
	for i, x := range lexemes {
		gap(emit, src[at:x.off])
		end := x.off + goLen(src, x)
		next := len(src)
		if i+1 < len(lexemes) {
			next = lexemes[i+1].off
		}
		end = min(end, next) // lexemes never overlap; the text is emitted once
		emit(goType(src, lexemes, i), src[x.off:end])
		at = end
	}
	gap(emit, src[at:])
	return out
}

// gap emits the text between tokens: whitespace, or anything the scanner skipped
// (a byte order mark).
func gap(emit func(chroma.TokenType, string), s string) {
	if strings.TrimSpace(s) == "" {
		emit(chroma.TextWhitespace, s)
	} else {
		emit(chroma.Text, s)
	}
}

// goLen is the length in the source of the lexeme: the scanner strips carriage
// returns from comments and raw strings, so those are measured in src.
func goLen(src string, x goLexeme) int {
	rest := src[x.off:]
	switch {
	case x.tok == token.COMMENT && strings.HasPrefix(rest, "/*"):
		if i := strings.Index(rest[2:], "*/"); i >= 0 {
			return i + 4
		}
		return len(rest)
	case x.tok == token.COMMENT:
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			return i
		}
		return len(rest)
	case x.tok == token.STRING && strings.HasPrefix(rest, "`"):
		if i := strings.IndexByte(rest[1:], '`'); i >= 0 {
			return i + 2
		}
		return len(rest)
	case x.lit != "":
		return len(x.lit)
	default:
		return len(x.tok.String())
	}
}

// goType classifies lexemes[i] as chroma's Go lexer does.
func goType(src string, lexemes []goLexeme, i int) chroma.TokenType {
	x := lexemes[i]
	switch {
	case x.tok == token.COMMENT:
		switch {
		case strings.HasPrefix(x.lit, "/*"):
			return chroma.CommentMultiline
		case goDirective(x.lit):
			return chroma.CommentPreproc
		default:
			return chroma.CommentSingle
		}
	case x.tok == token.IDENT:
		// A call: the name is followed by "(", for a builtin with nothing between.
		call, tight := false, false
		if i+1 < len(lexemes) && lexemes[i+1].tok == token.LPAREN {
			between := src[x.off+len(x.lit) : lexemes[i+1].off]
			call, tight = strings.TrimSpace(between) == "", between == ""
		}
		switch {
		case goConstants[x.lit]:
			return chroma.KeywordConstant
		case (goBuiltinFuncs[x.lit] || goBuiltinTypes[x.lit]) && tight:
			return chroma.NameBuiltin
		case goBuiltinTypes[x.lit]:
			return chroma.KeywordType
		case call:
			return chroma.NameFunction
		default:
			return chroma.NameOther
		}
	case x.tok == token.PACKAGE || x.tok == token.IMPORT:
		return chroma.KeywordNamespace
	case x.tok == token.VAR || x.tok == token.FUNC || x.tok == token.STRUCT || x.tok == token.MAP ||
		x.tok == token.CHAN || x.tok == token.TYPE || x.tok == token.INTERFACE || x.tok == token.CONST:
		return chroma.KeywordDeclaration
	case x.tok.IsKeyword():
		return chroma.Keyword
	case x.tok == token.INT:
		return goIntType(x.lit)
	case x.tok == token.FLOAT:
		return chroma.LiteralNumberFloat
	case x.tok == token.IMAG:
		return chroma.LiteralNumber
	case x.tok == token.CHAR:
		return chroma.LiteralStringChar
	case x.tok == token.STRING:
		return chroma.LiteralString
	case x.tok == token.LPAREN || x.tok == token.RPAREN || x.tok == token.LBRACK || x.tok == token.RBRACK ||
		x.tok == token.LBRACE || x.tok == token.RBRACE || x.tok == token.COMMA || x.tok == token.PERIOD ||
		x.tok == token.SEMICOLON || x.tok == token.COLON:
		return chroma.Punctuation
	case x.tok.IsOperator():
		return chroma.Operator
	default: // token.ILLEGAL: a character Go has no use for
		return chroma.Error
	}
}

// goDirective reports whether a line comment is a directive (//go:build,
// //line, //export …), by go/ast's rule: no space after the slashes.
func goDirective(c string) bool {
	body := c[2:]
	if strings.HasPrefix(body, "line ") || strings.HasPrefix(body, "extern ") || strings.HasPrefix(body, "export ") {
		return true
	}
	colon := strings.IndexByte(body, ':')
	if colon <= 0 || colon+1 >= len(body) {
		return false
	}
	for _, r := range body[:colon] {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return false
		}
	}
	r := body[colon+1]
	return 'a' <= r && r <= 'z' || '0' <= r && r <= '9'
}

func goIntType(lit string) chroma.TokenType {
	l := strings.ToLower(lit)
	switch {
	case strings.HasPrefix(l, "0x"):
		return chroma.LiteralNumberHex
	case strings.HasPrefix(l, "0b"):
		return chroma.LiteralNumberBin
	case strings.HasPrefix(l, "0o") || len(l) > 1 && l[0] == '0':
		return chroma.LiteralNumberOct
	default:
		return chroma.LiteralNumberInteger
	}
}

// The predeclared identifiers of the universe scope.
var (
	goConstants    = map[string]bool{"true": true, "false": true, "iota": true, "nil": true}
	goBuiltinTypes = map[string]bool{
		"any": true, "bool": true, "byte": true, "comparable": true, "complex64": true, "complex128": true,
		"error": true, "float32": true, "float64": true, "int": true, "int8": true, "int16": true,
		"int32": true, "int64": true, "rune": true, "string": true, "uint": true, "uint8": true,
		"uint16": true, "uint32": true, "uint64": true, "uintptr": true,
	}
	goBuiltinFuncs = map[string]bool{
		"append": true, "cap": true, "clear": true, "close": true, "complex": true, "copy": true,
		"delete": true, "imag": true, "len": true, "make": true, "max": true, "min": true, "new": true,
		"panic": true, "print": true, "println": true, "real": true, "recover": true,
	}
)
