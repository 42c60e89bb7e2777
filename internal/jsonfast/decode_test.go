package jsonfast

import (
	"reflect"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"
)

type kind string

type match struct {
	Line   int      `json:"line"`
	Text   string   `json:"text"`
	Ranges [][2]int `json:"ranges,omitempty"`
}

type file struct {
	Path    string  `json:"path"`
	Count   int32   `json:"count"`
	Matches []match `json:"matches,omitempty"`
}

type stamp struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// meta is shaped like the tools' meta: nested structs, optional members,
// pointers, arrays.
type meta struct {
	Kind      kind     `json:"kind"`
	Files     []file   `json:"files,omitempty"`
	Paths     []string `json:"paths,omitzero"`
	Total     int      `json:"total"`
	Truncated bool     `json:"truncated,omitzero"`
	Stamp     *stamp   `json:"stamp,omitzero"`
	Next      *meta    `json:"next,omitzero"`
	Untagged  string
}

// check fails if Decode takes b into a fresh T where json.Unmarshal refuses it
// or decodes it to anything else.
func check[T any](t *testing.T, b []byte) bool {
	t.Helper()
	var fast T
	if !Decode(b, &fast) {
		return false
	}
	var want T
	if err := json.Unmarshal(b, &want, json.RejectUnknownMembers(true)); err != nil {
		t.Fatalf("Decode took what json.Unmarshal refuses (%v):\n%s", err, b)
	}
	if diff := cmp.Diff(want, fast); diff != "" {
		t.Fatalf("Decode and json.Unmarshal differ on\n%s\n(-json.Unmarshal +Decode):\n%s", b, diff)
	}
	return true
}

// seeds are inputs Decode must take, then inputs near them.
var seeds = []string{
	`{"kind":"grep","files":[{"path":"a.go","count":2,"matches":[{"line":3,"text":"\tx := \"y\"","ranges":[[1,2],[4,6]]},{"line":4,"text":"é"}]}],"total":2,"Untagged":""}`,
	`{"kind":"","paths":[],"total":0,"truncated":true,"stamp":{"path":"/a","size":-1},"Untagged":"u","next":{"kind":"k","total":1,"Untagged":""}}`,
	` { "kind" : "x" , "total" : 1 , "Untagged" : "" , "files" : [ ] } `,
	`{"kind":"x","total":1}`,
	`{"kind":"x","total":1,"Untagged":"","extra":1}`,
	`{"kind":"x","total":1,"Untagged":"","total":2}`,
	`{"kind":"x","total":1,"Untagged":"","Total":2}`,
	`{"kind":"x","total":1,"Untagged":"","stamp":null}`,
	`{"kind":"x","total":1.5,"Untagged":""}`,
	`{"kind":"x","total":99999999999999999999,"Untagged":""}`,
	`{"kind":"x","total":-9223372036854775808,"Untagged":""}`,
	`{"kind":"x","total":9223372036854775808,"Untagged":""}`,
	`{"kind":"x","total":18446744073709551615,"Untagged":""}`,
	`{"kind":"x","total":-0,"Untagged":""}`,
	`{"kind":"x","total":-,"Untagged":""}`,
	`{"kind":"x","total":1,"Untagged":"","files":[{"path":"a","count":4294967296}]}`,
	`{"kind":"x","total":1,"Untagged":"","files":[{"path":"a","count":1,"matches":[{"line":1,"text":"","ranges":[[1]]}]}]}`,
	`{"kind":"x","total":1,"Untagged":"","files":[{"path":"a","count":1,"matches":[{"line":1,"text":"","ranges":[[1,2,3]]}]}]}`,
	`{"kind":"\u0041","total":1,"Untagged":""}`,
	"{\"kind\":\"\xff\",\"total\":1,\"Untagged\":\"\"}",
	`{"kind":"x","total":1,"Untagged":""} {}`,
	`{"kind":"x","total":1,"Untagged":"",}`,
	`{"kind":"x","total":1,"Untagged":"","hidden":1}`,
	`[]`,
	`null`,
}

func TestDecode(t *testing.T) {
	for i, s := range seeds {
		if took := check[meta](t, []byte(s)); i < 3 && !took {
			t.Errorf("Decode left a plain input to json.Unmarshal:\n%s", s)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { check[meta](t, b) })
}

type own struct{ A string }

func (o *own) UnmarshalJSON([]byte) error { o.A = "own"; return nil }

type holdsOwn struct {
	O own `json:"o"`
}

// TestDecodeRefusesTypes: types json.Unmarshal decodes by rules of their own
// are never taken, nor are the types that hold them.
func TestDecodeRefusesTypes(t *testing.T) {
	cases := []struct {
		v  any
		in string
	}{
		{new(own), `{"A":"x"}`},
		{new(holdsOwn), `{"o":{"A":"x"}}`},
		{new(map[string]string), `{"a":"b"}`},
		{new([]byte), `[1]`},
		{new(float64), `1`},
		{new(uint), `1`},
		{new(time.Duration), `1`},
		{new(any), `"x"`},
		{new(struct {
			A string `json:"a,string"`
		}), `{"a":"1"}`},
		{new(struct{ stamp }), `{"stamp":{"path":"a","size":1}}`},
		{new(struct {
			A string
			B string `json:"A"`
		}), `{"A":"x"}`},
	}
	for _, c := range cases {
		if Decode([]byte(c.in), c.v) {
			t.Errorf("Decode took %s into %s", c.in, reflect.TypeOf(c.v).Elem())
		}
	}
	if Decode([]byte(`{}`), nil) || Decode([]byte(`"x"`), "x") {
		t.Error("Decode took a value that is not a pointer")
	}
}

// benchMeta is a search's meta of 120 matching lines.
func benchMeta(b *testing.B) []byte {
	m := meta{Kind: "grep", Total: 120, Files: []file{{Path: "handler.go", Count: 120}}}
	for i := range 120 {
		m.Files[0].Matches = append(m.Files[0].Matches, match{Line: i + 3, Text: "\tif err := step(ctx, 0); err != nil { return err }", Ranges: [][2]int{{11, 15}}})
	}
	raw, err := json.Marshal(m)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	return raw
}

func BenchmarkDecode(b *testing.B) {
	raw := benchMeta(b)
	for b.Loop() {
		var m meta
		if !Decode(raw, &m) {
			b.Fatal("not taken")
		}
	}
}

// BenchmarkUnmarshal is what Decode saves.
func BenchmarkUnmarshal(b *testing.B) {
	raw := benchMeta(b)
	for b.Loop() {
		var m meta
		if err := json.Unmarshal(raw, &m, json.RejectUnknownMembers(true)); err != nil {
			b.Fatal(err)
		}
	}
}

// What Decode returns does not share memory with its input, which the caller
// may reuse: strings in arrays are copied into blocks of their own.
func TestDecodeKeepsNothingOfItsInput(t *testing.T) {
	in := []byte(`{"kind":"k","files":[{"path":"a.go","count":1,"matches":[{"line":1,"text":"\tx","ranges":[[1,2]]},{"line":2,"text":"y"}]}],"paths":["p","q"],"total":1,"Untagged":"u"}`)
	var m meta
	if !Decode(in, &m) {
		t.Fatal("not taken")
	}
	want := meta{Kind: "k", Files: []file{{Path: "a.go", Count: 1, Matches: []match{{Line: 1, Text: "\tx", Ranges: [][2]int{{1, 2}}}, {Line: 2, Text: "y"}}}},
		Paths: []string{"p", "q"}, Total: 1, Untagged: "u"}
	for i := range in {
		in[i] = '#'
	}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Fatalf("the decoded value changed with its input (-want +got):\n%s", diff)
	}
}
