package card

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

func old(s string) *string { return &s }

// everyCall and everyResult hold one fully populated value of each variant.
var everyCall = []Call{
	&GenericCall{Title: "Read main.go", ToolKind: "read", RawInput: RawJSON(`{"path":"main.go"}`),
		Content: []Content{Text("hi"), Image("image/png", "iVBORw0=")}, Locations: []Location{{Path: "main.go", Line: Ptr(3)}}},
	&TerminalCall{Title: "go test ./...", Description: "run the tests", Cwd: "/w"},
	&DiffCall{Title: "Edit a.go", Diffs: []FileDiff{{Path: "a.go", OldText: old("x"), NewText: "y"}, {Path: "b.go", NewText: "new"}},
		Locations: []Location{{Path: "a.go"}}},
	&PlanCall{Title: "Plan: add a flag", Plan: "# Add --quiet\n\n1. parse it", Files: []string{"main.go"}, Steps: []string{"Parse --quiet"}},
	&QuestionCall{Title: "Which database?", Question: "Which database?", FreeText: true,
		Choices: []Choice{{ID: "1", Label: "SQLite", Description: "one file"}, {ID: "2", Label: "Postgres"}}},
	&TaskCall{Title: "Find the flag parsing", Agent: "explore", Prompt: "Where are flags parsed?"},
}

var everyResult = []Result{
	&GenericResult{Title: "done", Content: []Content{Text("ok")}},
	&TerminalResult{Title: "go test", Output: "PASS\n", ExitCode: Ptr(0)},
	&TerminalResult{Output: "", Signal: "SIGKILL", TimedOut: true},
	&TerminalResult{Output: "touch: cannot touch '/etc/x': Permission denied\n", ExitCode: Ptr(1),
		Sandbox: &Sandbox{Refused: "touch: cannot touch '/etc/x': Permission denied"}},
	&TerminalResult{Output: "ok\n", ExitCode: Ptr(0), Sandbox: &Sandbox{Network: true}},
	&ReadResult{Title: "Read a.go", Path: "a.go", Offset: 10, Lines: []ReadLine{{Number: 10, Text: "package a"}}, TotalLines: 12, Lang: "go",
		Content: []Content{Text("10: package a")}},
	&ReadResult{Path: "big.txt", Offset: 5, Lines: []ReadLine{}, TotalLines: 9},
	&ReadResult{Path: "huge.log", Offset: 1, Lines: []ReadLine{{Number: 1, Text: "start"}}, TotalLines: 3001, TotalLinesAtLeast: true},
	&DiffResult{Diffs: []FileDiff{{Path: "a.go", OldText: old("a\nb\n"), NewText: "a\nc\n", OldStart: 4, NewStart: 4}},
		Locations: []Location{{Path: "a.go", Line: Ptr(4)}}},
	&DiffResult{Title: "Edit a.go", Diffs: []FileDiff{{Path: "a.go", OldText: old("x\n"), NewText: "y\n", OldStart: 2, NewStart: 2}},
		Diagnostics: []Diagnostic{{Path: "a.go", Line: 2, Column: 1, Severity: SeverityError, Message: "undefined: y", Source: "compiler"},
			{Path: "a.go", Line: 7, Column: 3, Severity: SeverityWarning, Message: "unused"}}},
	&SearchResult{Title: "Grep TODO", Query: "TODO", Dir: "/w", Total: 4, Truncated: true, Files: []SearchFile{
		{Path: "a.go", Count: 2, Matches: []SearchMatch{
			{Line: 3, Text: "// TODO: x TODO", Ranges: [][2]int{{3, 7}, {11, 15}}},
			{Line: 4, Text: "func x() {}"},
			{Line: 9, Text: "TODO", Ranges: [][2]int{{0, 4}}}}},
		{Path: "empty.txt", Count: 1, Matches: []SearchMatch{{Line: 1, Text: "", Ranges: [][2]int{{0, 0}}}}},
	}},
	&SearchResult{Query: "**/*.go", Dir: "/w", Paths: []string{"a.go", "b/c.go"}, Total: 2},
	&SearchResult{Query: "nothing", Dir: "/w", Total: 0},
	&PlanResult{Title: "Plan: add a flag", Plan: "# Add --quiet", Files: []string{"main.go"}, Steps: []string{"Parse --quiet"},
		Choices: []Choice{{ID: "default", Label: "Yes"}, {ID: "keep", Label: "No, keep planning"}}, Answer: Answer{ID: "default", Text: "Yes"}, Mode: "default"},
	&PlanResult{Plan: "x", Choices: []Choice{{ID: "keep", Label: "No"}}, Answer: Answer{Text: "use a flag package"}},
	&QuestionResult{Question: "Which database?", Choices: []Choice{{ID: "1", Label: "SQLite"}, {ID: "2", Label: "Postgres"}},
		Answer: Answer{ID: "2", Text: "Postgres"}},
	&QuestionResult{Question: "Which?", Choices: []Choice{{ID: "1", Label: "A"}, {ID: "2", Label: "B"}}},
	&TaskResult{Title: "Find the flag parsing", Agent: "explore", Session: "20260101-000000-abcd", Text: "In main.go.", Calls: 2, Stop: "end_turn", Tokens: 120},
}

// TestGolden pins the wire form of every variant (run with -update to rewrite).
func TestGolden(t *testing.T) {
	var b strings.Builder
	for _, c := range everyCall {
		j, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	for _, r := range everyResult {
		j, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	path := filepath.Join("testdata", "cards.golden.jsonl")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("wire form changed (-want +got):\n%s", diff)
	}
}

func TestRoundTrip(t *testing.T) {
	for _, c := range everyCall {
		j, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeCall(j)
		if err != nil {
			t.Fatalf("DecodeCall(%s): %v", j, err)
		}
		if diff := cmp.Diff(c, got); diff != "" {
			t.Errorf("round trip of %s (-want +got):\n%s", c.Kind(), diff)
		}
	}
	for _, r := range everyResult {
		j, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeResult(j)
		if err != nil {
			t.Fatalf("DecodeResult(%s): %v", j, err)
		}
		if diff := cmp.Diff(r, got); diff != "" {
			t.Errorf("round trip of %s (-want +got):\n%s", r.Kind(), diff)
		}
	}
}

func TestDiscriminatorFirstOnTheWire(t *testing.T) {
	j, err := json.Marshal(everyCall[1])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(j), `{"card":"terminal",`) {
		t.Errorf("got %s", j)
	}
}

func TestDecodeRejects(t *testing.T) {
	tests := []struct {
		name, in string
		call     bool // decode as a call card, else as a result card
	}{
		{"missing card", `{"title":"x"}`, true},
		{"unknown card", `{"card":"table","title":"x"}`, true},
		{"read is result-only", `{"card":"read","path":"a","offset":1,"lines":[],"totalLines":0}`, true},
		{"card is a number", `{"card":1,"title":"x"}`, true},
		{"card is null", `{"card":null,"title":"x"}`, true},
		{"card is wrongly cased", `{"card":"Generic","title":"x"}`, true},
		{"card key wrongly cased", `{"Card":"generic","title":"x"}`, true},
		{"unknown field", `{"card":"generic","title":"x","extra":1}`, true},
		{"wrongly cased field", `{"card":"generic","Title":"x"}`, true},
		{"duplicate field", `{"card":"generic","title":"x","title":"y"}`, true},
		{"duplicate card", `{"card":"generic","card":"diff","title":"x"}`, true},
		{"wrong type", `{"card":"terminal","title":5}`, true},
		{"field of another variant", `{"card":"terminal","title":"x","diffs":[]}`, true},
		{"trailing data", `{"card":"generic","title":"x"} {}`, true},
		{"not an object", `["generic"]`, true},
		{"null", `null`, true},
		{"empty", ``, true},
		{"truncated", `{"card":"generic","title":"x"`, true},
		{"bad content type", `{"card":"generic","title":"x","content":[{"type":"audio"}]}`, true},
		{"image without data", `{"card":"generic","title":"x","content":[{"type":"image","mimeType":"image/png"}]}`, true},
		{"diff without diffs", `{"card":"diff","title":"x"}`, true},
		{"diff item unknown field", `{"card":"diff","title":"x","diffs":[{"path":"a","oldText":null,"newText":"","x":1}]}`, true},
		{"result unknown card", `{"card":"chart"}`, false},
		{"diagnostic line zero", `{"card":"diff","diffs":[],"diagnostics":[{"path":"a","line":0,"column":1,"severity":"error","message":"m"}]}`, false},
		{"diagnostic unknown severity", `{"card":"diff","diffs":[],"diagnostics":[{"path":"a","line":1,"column":1,"severity":"fatal","message":"m"}]}`, false},
		{"diagnostic empty path", `{"card":"diff","diffs":[],"diagnostics":[{"path":"","line":1,"column":1,"severity":"error","message":"m"}]}`, false},
		{"diagnostic unknown field", `{"card":"diff","diffs":[],"diagnostics":[{"path":"a","line":1,"column":1,"severity":"error","message":"m","code":1}]}`, false},
		{"read missing lines", `{"card":"read","path":"a","offset":1,"totalLines":0}`, false},
		{"read lines wrong type", `{"card":"read","path":"a","offset":1,"lines":{},"totalLines":0}`, false},
		{"read line item unknown field", `{"card":"read","path":"a","offset":1,"lines":[{"number":1,"text":"x","n":2}],"totalLines":1}`, false},
		{"search is result-only", `{"card":"search","query":"x","dir":"/","total":0}`, true},
		{"search files and paths", `{"card":"search","query":"x","dir":"/","files":[{"path":"a","count":0}],"paths":["a"],"total":1}`, false},
		{"search range past text", `{"card":"search","query":"x","dir":"/","files":[{"path":"a","count":1,"matches":[{"line":1,"text":"ab","ranges":[[1,3]]}]}],"total":1}`, false},
		{"search reversed range", `{"card":"search","query":"x","dir":"/","files":[{"path":"a","count":1,"matches":[{"line":1,"text":"ab","ranges":[[2,1]]}]}],"total":1}`, false},
		{"search negative range", `{"card":"search","query":"x","dir":"/","files":[{"path":"a","count":1,"matches":[{"line":1,"text":"ab","ranges":[[-1,1]]}]}],"total":1}`, false},
		{"search overlapping ranges", `{"card":"search","query":"x","dir":"/","files":[{"path":"a","count":1,"matches":[{"line":1,"text":"abcd","ranges":[[0,2],[1,3]]}]}],"total":1}`, false},
		{"search range of three", `{"card":"search","query":"x","dir":"/","files":[{"path":"a","count":1,"matches":[{"line":1,"text":"abcd","ranges":[[0,2,3]]}]}],"total":1}`, false},
		{"search lines out of order", `{"card":"search","query":"x","dir":"/","files":[{"path":"a","count":2,"matches":[{"line":5,"text":"a","ranges":[[0,1]]},{"line":5,"text":"a","ranges":[[0,1]]}]}],"total":2}`, false},
		{"search line zero", `{"card":"search","query":"x","dir":"/","files":[{"path":"a","count":1,"matches":[{"line":0,"text":"a","ranges":[[0,1]]}]}],"total":1}`, false},
		{"search count below shown", `{"card":"search","query":"x","dir":"/","files":[{"path":"a","count":0,"matches":[{"line":1,"text":"a","ranges":[[0,1]]}]}],"total":0}`, false},
		{"search total below shown", `{"card":"search","query":"x","dir":"/","paths":["a","b"],"total":1}`, false},
		{"search total above shown, not truncated", `{"card":"search","query":"x","dir":"/","paths":["a"],"total":2}`, false},
		{"search empty path", `{"card":"search","query":"x","dir":"/","paths":[""],"total":1}`, false},
		{"search file empty path", `{"card":"search","query":"x","dir":"/","files":[{"path":"","count":0}],"total":0}`, false},
		{"search unknown match field", `{"card":"search","query":"x","dir":"/","files":[{"path":"a","count":1,"matches":[{"line":1,"text":"a","col":1}]}],"total":1}`, false},
		{"exit code string", `{"card":"terminal","exitCode":"0"}`, false},
		{"exit code fractional", `{"card":"terminal","exitCode":1.5}`, false},
		{"question without choices", `{"card":"question","title":"x","question":"x"}`, true},
		{"question choice without label", `{"card":"question","title":"x","question":"x","choices":[{"id":"1","label":""}]}`, true},
		{"question choice id twice", `{"card":"question","title":"x","question":"x","choices":[{"id":"1","label":"a"},{"id":"1","label":"b"}]}`, true},
		{"question answer not offered", `{"card":"question","question":"x","choices":[{"id":"1","label":"a"}],"answer":{"id":"2","text":"b"}}`, false},
		{"plan answer not offered", `{"card":"plan","plan":"x","choices":[{"id":"keep","label":"a"}],"answer":{"id":"auto"}}`, false},
		{"plan result without choices", `{"card":"plan","plan":"x","answer":{}}`, false},
		{"plan unknown field", `{"card":"plan","title":"x","plan":"x","mode":"auto"}`, true},
		{"invalid utf8 in string", "{\"card\":\"generic\",\"title\":\"\xff\"}", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.call {
				_, err = DecodeCall([]byte(tt.in))
			} else {
				_, err = DecodeResult([]byte(tt.in))
			}
			if err == nil {
				t.Fatalf("decoding %s succeeded, want an error", tt.in)
			}
			if !errors.Is(err, ErrDecode) {
				t.Errorf("error %v does not wrap ErrDecode", err)
			}
		})
	}
}

func TestDecodeAcceptsMinimal(t *testing.T) {
	if c, err := DecodeCall([]byte(`{"card":"terminal","title":"ls"}`)); err != nil || c.(*TerminalCall).Title != "ls" {
		t.Errorf("got %#v, %v", c, err)
	}
	if r, err := DecodeResult([]byte(`{"card":"generic"}`)); err != nil || r.Kind() != KindGeneric {
		t.Errorf("got %#v, %v", r, err)
	}
	// oldText null is a new file; a present string is a change.
	c, err := DecodeCall([]byte(`{"card":"diff","title":"w","diffs":[{"path":"a","oldText":null,"newText":"x"},{"path":"b","oldText":"","newText":"y"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	d := c.(*DiffCall).Diffs
	if d[0].OldText != nil || d[1].OldText == nil {
		t.Errorf("oldText null/\"\" not kept apart: %#v", d)
	}
}

// TestHandEncodingIsTheGeneralOne: the read and search results, written by
// hand, are byte for byte what the reflection encoder writes, escapes included;
// text that is not UTF-8 is refused as it refuses it.
func TestHandEncodingIsTheGeneralOne(t *testing.T) {
	odd := "tab\there \"q\" back\\slash <a&b> \x00\x01\x1f\x7f \u2028 é 😀 \r\n\b\f"
	cases := append([]Result{
		&ReadResult{Title: odd, Path: odd, Offset: -1, Lines: []ReadLine{{Number: 1, Text: odd}, {Number: 2}}, TotalLines: 2,
			TotalLinesAtLeast: true, Lang: odd, Content: []Content{{Type: ContentImage, Data: "AA==", MimeType: "image/png", URI: odd}, Text(odd)}},
		&SearchResult{Title: odd, Query: odd, Dir: odd, Files: []SearchFile{{Path: odd, Count: 1, Matches: []SearchMatch{
			{Line: 1, Text: odd, Ranges: [][2]int{{0, 1}, {-2, 3}}}, {Line: 2, Text: odd, Ranges: [][2]int{}}}}, {Path: "x", Count: 3}},
			Paths: []string{odd, ""}, Total: -4},
	}, everyResult...)
	for _, r := range cases {
		var got []byte
		var ok bool
		switch r := r.(type) {
		case *ReadResult:
			got, ok = appendReadResult(nil, r, false)
		case *SearchResult:
			got, ok = appendSearchResult(nil, r, false)
		case *GenericResult, *TerminalResult, *DiffResult, *PlanResult, *QuestionResult, *TaskResult:
			continue
		}
		if want := generalEncoding(t, r); !ok || string(got) != string(want) {
			t.Errorf("encoded by hand (%v):\n%s\nby reflection:\n%s", ok, got, want)
		}
	}
	for _, r := range []Result{&ReadResult{Path: "a", Lines: []ReadLine{{Text: "\xff"}}}, &SearchResult{Query: "\xfe"}} {
		if _, err := r.(json.Marshaler).MarshalJSON(); err == nil {
			t.Errorf("%#v: invalid UTF-8 encoded", r)
		}
	}
}
