package web

import (
	"strings"
	"testing"
)

// The link policy that replaced the HTML sanitiser: which URLs survive, what a
// dropped link leaves, and the attributes kept links get.
func TestMarkdownLinkPolicy(t *testing.T) {
	cases := []struct {
		src  string
		want string // the exact paragraph
	}{
		{"[a](https://x.example/)", `<a href="https://x.example/" rel="nofollow noreferrer noopener" target="_blank">a</a>`},
		{"[a](HTTP://x.example/)", `<a href="HTTP://x.example/" rel="nofollow noreferrer noopener" target="_blank">a</a>`},
		{"[a](/rel)", `<a href="/rel" rel="nofollow noreferrer">a</a>`},
		{"[a](a/b:c)", `<a href="a/b:c" rel="nofollow noreferrer">a</a>`},
		{"[a](mailto:me@x.example)", `<a href="mailto:me@x.example" rel="nofollow noreferrer">a</a>`},
		{"[*a*](javascript:alert(1))", `<em>a</em>`},
		{"[a](JaVaScRiPt:alert(1))", `a`},
		{"[a](java&#x09;script:alert(1))", `a`},
		{"[a](&#x20;javascript:alert(1))", `a`},
		{"[a](vbscript:x)", `a`},
		{"[a](data:text/html,x)", `a`},
		{"[a](file:///etc/passwd)", `a`},
		{"[a](tel:123)", `a`},
		{"<javascript:alert(1)>", `javascript:alert(1)`},
		{"<https://x.example/>", `<a href="https://x.example/" rel="nofollow noreferrer noopener" target="_blank">https://x.example/</a>`},
		{"<me@x.example>", `<a href="mailto:me@x.example" rel="nofollow noreferrer">me@x.example</a>`},
		{"see www.x.example", `see <a href="http://www.x.example" rel="nofollow noreferrer noopener" target="_blank">www.x.example</a>`},
		{"![i](https://x.example/i.png)", `<img src="https://x.example/i.png" alt="i">`},
		{"![i](data:image/png;base64,AAAA)", `i`},
		{"![i](javascript:alert(1))", `i`},
	}
	for _, c := range cases {
		got := strings.TrimSpace(string(markdown(c.src)))
		want := "<p>" + c.want + "</p>"
		if got != want {
			t.Errorf("%q:\n got %s\nwant %s", c.src, got, want)
		}
	}
}

// Table alignment is an attribute: the CSP refuses inline styles.
func TestMarkdownTableAlignment(t *testing.T) {
	got := string(markdown("| a | b |\n|:-:|--:|\n| 1 | 2 |\n"))
	for _, want := range []string{`<th align="center">a</th>`, `<td align="right">2</td>`} {
		if !strings.Contains(got, want) {
			t.Errorf("no %s in\n%s", want, got)
		}
	}
	if strings.Contains(got, "style") {
		t.Errorf("an inline style in\n%s", got)
	}
}
