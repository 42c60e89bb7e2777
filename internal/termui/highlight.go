package termui

import (
	"strconv"
	"strings"

	"sync"

	"github.com/alecthomas/chroma/v2"

	hl "github.com/dsh-dev/dsh/internal/highlight"
)

// codeStyle is a dark-friendly palette. Its colours are mapped to the xterm 256-colour
// palette, which nearly every terminal draws; backgrounds are never set, and text in
// the style's default colour is left in the terminal's own.
//
// It is built here rather than taken from chroma's styles package, whose init
// parses every bundled style and would cost each dsh start-up about 10 ms; and
// built on first use, as most runs of dsh highlight nothing.
var codeStyle = sync.OnceValue(func() *chroma.Style {
	return chroma.MustNewStyle("dsh-dark", chroma.StyleEntries{
		chroma.Background:          "#e6edf3 bg:#0d1117",
		chroma.Keyword:             "bold #ff7b72",
		chroma.KeywordConstant:     "bold #79c0ff",
		chroma.KeywordType:         "bold #ff7b72",
		chroma.NameBuiltin:         "#d2a8ff",
		chroma.NameFunction:        "bold #d2a8ff",
		chroma.NameClass:           "bold #f0883e",
		chroma.NameConstant:        "bold #79c0ff",
		chroma.NameDecorator:       "bold #d2a8ff",
		chroma.NameTag:             "#7ee787",
		chroma.NameAttribute:       "#79c0ff",
		chroma.NameVariable:        "#79c0ff",
		chroma.LiteralString:       "#a5d6ff",
		chroma.LiteralStringEscape: "#79c0ff",
		chroma.LiteralNumber:       "#a5d6ff",
		chroma.Comment:             "italic #8b949e",
		chroma.CommentPreproc:      "bold #8b949e",
		chroma.Operator:            "bold #ff7b72",
		chroma.GenericDeleted:      "#ffa198",
		chroma.GenericInserted:     "#56d364",
		chroma.GenericHeading:      "bold #79c0ff",
	})
})

// highlight colours cleaned lines as the language lang. The window is tokenised
// whole, so a construct spanning lines (a block comment, a raw string) is coloured
// right, then split back into one span list per line. It returns nil when lang has
// no lexer or tokenising fails. The tokens always add up to the text, so
// highlighting never changes what is shown.
func highlight(lang string, lines []string) [][]span {
	tokens, ok := hl.Tokens(lang, strings.Join(lines, "\n"))
	if !ok {
		return nil
	}
	split := chroma.SplitTokensIntoLines(tokens)
	style := codeStyle()
	plainColour := style.Get(chroma.Background).Colour
	sgrs := map[chroma.TokenType]string{}
	out := make([][]span, len(lines))
	for i, l := range lines {
		if i >= len(split) {
			out[i] = []span{{"", l}}
			continue
		}
		var spans []span
		for _, t := range split[i] {
			v := strings.TrimSuffix(t.Value, "\n")
			if strings.TrimLeft(v, " ") == "" { // a colour on blanks only adds escapes
				spans = append(spans, span{"", v})
				continue
			}
			sgr, ok := sgrs[t.Type]
			if !ok {
				sgr = entrySGR(style.Get(t.Type), plainColour)
				sgrs[t.Type] = sgr
			}
			spans = append(spans, span{sgr, v})
		}
		out[i] = spans
	}
	return out
}

// entrySGR turns a style entry into SGR parameters.
func entrySGR(e chroma.StyleEntry, plain chroma.Colour) string {
	var p []string
	if e.Bold == chroma.Yes {
		p = append(p, "1")
	}
	if e.Italic == chroma.Yes {
		p = append(p, "3")
	}
	if e.Underline == chroma.Yes {
		p = append(p, "4")
	}
	if e.Colour.IsSet() && e.Colour != plain {
		p = append(p, "38;5;"+strconv.Itoa(xterm256(e.Colour)))
	}
	return strings.Join(p, ";")
}

// cubeLevels are the channel values of the xterm 6×6×6 colour cube.
var cubeLevels = [6]int{0, 95, 135, 175, 215, 255}

// xterm256 is the palette index nearest to c: in the colour cube (16–231) or on the
// grey ramp (232–255), whichever is closer.
func xterm256(c chroma.Colour) int {
	r, g, b := int(c.Red()), int(c.Green()), int(c.Blue())
	level := func(v int) int {
		switch {
		case v < 48:
			return 0
		case v < 115:
			return 1
		default:
			return (v - 35) / 40
		}
	}
	lr, lg, lb := level(r), level(g), level(b)
	cube := 16 + 36*lr + 6*lg + lb
	grey := min(max((r+g+b)/3-3, 0)/10, 23)
	gv := 8 + 10*grey
	dist := func(x, y, z int) int {
		return (r-x)*(r-x) + (g-y)*(g-y) + (b-z)*(b-z)
	}
	if dist(gv, gv, gv) < dist(cubeLevels[lr], cubeLevels[lg], cubeLevels[lb]) {
		return 232 + grey
	}
	return cube
}
