package search

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// TestMetaNarrowing: damaged, old or hostile meta never becomes a card; the
// consumer then shows the raw text. The good meta first, to prove it can pass.
func TestMetaNarrowing(t *testing.T) {
	good := `{"query":"x","dir":"/w","files":[{"path":"a.go","count":2,"matches":[{"line":1,"text":"x y x","ranges":[[0,1],[4,5]]},{"line":2,"text":"ctx"},{"line":3,"text":"x","ranges":[[0,1]]}]}],"total":2}`
	for _, tc := range []struct {
		name, meta string
		ok         bool
	}{
		{"good", good, true},
		{"good paths", `{"query":"*.go","dir":"/w","paths":["a.go"],"total":1}`, true},
		{"good empty", `{"query":"x","dir":"/w","total":0}`, true},
		{"good truncated", `{"query":"x","dir":"/w","paths":["a.go"],"total":9,"truncated":true}`, true},
		{"missing", ``, false},
		{"not json", `{"query":`, false},
		{"array", `[1]`, false},
		{"null", `null`, false},
		{"unknown field", strings.Replace(good, `"total":2`, `"total":2,"extra":1`, 1), false},
		{"duplicate field", strings.Replace(good, `"total":2`, `"total":2,"total":2`, 1), false},
		{"query missing", strings.Replace(good, `"query":"x",`, ``, 1), false},
		{"query not a string", strings.Replace(good, `"query":"x"`, `"query":1`, 1), false},
		{"dir relative", strings.Replace(good, `"dir":"/w"`, `"dir":"w"`, 1), false},
		{"total negative", `{"query":"x","dir":"/w","total":-1}`, false},
		{"total fractional", `{"query":"x","dir":"/w","total":1.5}`, false},
		{"total below shown", strings.Replace(good, `"total":2`, `"total":1`, 1), false},
		{"total above shown, not truncated", strings.Replace(good, `"total":2`, `"total":5`, 1), false},
		{"both files and paths", strings.Replace(good, `"total":2`, `"paths":["a"],"total":3`, 1), false},
		{"line zero", strings.Replace(good, `"line":1,`, `"line":0,`, 1), false},
		{"line huge", strings.Replace(good, `"line":1,`, `"line":1e300,`, 1), false},
		{"lines repeat", strings.Replace(good, `"line":2,`, `"line":1,`, 1), false},
		{"lines decrease", strings.Replace(good, `"line":3,`, `"line":1,`, 1), false},
		{"range past text", strings.Replace(good, `[4,5]`, `[4,6]`, 1), false},
		{"range reversed", strings.Replace(good, `[4,5]`, `[5,4]`, 1), false},
		{"ranges overlap", strings.Replace(good, `[[0,1],[4,5]]`, `[[0,5],[4,5]]`, 1), false},
		{"range negative", strings.Replace(good, `[0,1],[4,5]`, `[-1,1],[4,5]`, 1), false},
		{"range of three", strings.Replace(good, `[4,5]`, `[4,5,6]`, 1), false},
		{"range not numbers", strings.Replace(good, `[4,5]`, `["a","b"]`, 1), false},
		{"count below shown", strings.Replace(good, `"count":2`, `"count":1`, 1), false},
		{"count negative", strings.Replace(good, `"count":2`, `"count":-2`, 1), false},
		{"empty path", strings.Replace(good, `"path":"a.go"`, `"path":""`, 1), false},
		{"text not a string", strings.Replace(good, `"text":"ctx"`, `"text":7`, 1), false},
		{"invalid utf8", strings.Replace(good, `"text":"ctx"`, "\"text\":\"\xff\"", 1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tool.Result{Content: []card.Content{card.Text("a.go\n1:x y x\n")}, Meta: jsontext.Value(tc.meta)}
			c := Grep().PresentResult([]byte(`{"pattern":"x"}`), r)
			if got := c != nil; got != tc.ok {
				t.Fatalf("card %v, want one: %v", c, tc.ok)
			}
			if c != nil && c.Kind() != card.KindSearch {
				t.Errorf("kind %s", c.Kind())
			}
		})
	}
	// An error result, or content of another shape, gives no card either.
	r := tool.Result{Content: []card.Content{card.Text("x")}, IsError: true, Meta: jsontext.Value(good)}
	if c := Grep().PresentResult([]byte(`{"pattern":"x"}`), r); c != nil {
		t.Errorf("an error result got a card: %v", c)
	}
	r = tool.Result{Content: []card.Content{card.Image("image/png", "AA==")}, Meta: jsontext.Value(good)}
	if c := Glob().PresentResult([]byte(`{"pattern":"x"}`), r); c != nil {
		t.Errorf("an image result got a card: %v", c)
	}
}
