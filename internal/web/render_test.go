package web

import (
	"bytes"
	"html/template"
	"strings"
	"testing"
)

// TestEscapingMatchesHTMLTemplate: the page's escaping, URL filter and URL
// normaliser write what html/template wrote for the same values in the same
// places, which the pages relied on before they stopped executing templates;
// and htmlEscape is text/template's HTMLEscape, which the Markdown renderer used.
func TestEscapingMatchesHTMLTemplate(t *testing.T) {
	tpl := template.Must(template.New("").Parse(
		`<p title="{{.}}">{{.}}</p><a href="{{.}}"></a><a href="/s/{{.}}"></a><details data-src="{{.}}"></details>`))
	for _, v := range []string{
		"", "plain", `<b>"q" 'a' & +1</b>`, "nul\x00byte", "bad\xffutf8 é ⋯",
		"/s/x/call/c%2F1#c-1-f0-L3", "javascript:alert(1)", "JavaScript:x", "data:text/html,x", "mailto:a@b", "HTTPS://x/y?z=1&w=2",
		"a/b:c", "%zz%41%4", "%41", " sp ace\t\n", "#frag", "?q=<'\">", "()[]{}|\\^`",
	} {
		var want bytes.Buffer
		if err := tpl.Execute(&want, v); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		o := out{&got}
		o.raw(`<p title="`)
		o.esc(v)
		o.raw(`">`)
		o.esc(v)
		o.raw(`</p><a href="`)
		o.url(v)
		o.raw(`"></a><a href="/s/`)
		o.urlPart(v)
		o.raw(`"></a><details data-src="`)
		o.url(v)
		o.raw(`"></details>`)
		if got.String() != want.String() {
			t.Errorf("%q:\n got %s\nwant %s", v, got.String(), want.String())
		}
		var md, tmd strings.Builder
		htmlEscape(&md, []byte(v))
		template.HTMLEscape(&tmd, []byte(v))
		if md.String() != tmd.String() {
			t.Errorf("htmlEscape(%q) = %q, want %q", v, md.String(), tmd.String())
		}
	}
}
