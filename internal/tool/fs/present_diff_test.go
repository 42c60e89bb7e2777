package fs

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

const hunkOK = `{"oldStart":3,"oldLines":2,"newStart":3,"newLines":1,"oldText":"a\nb\n","newText":"c\n"}`

func hunkMetaJSON(hunks ...string) string {
	return `{"path":"f.txt","created":false,"sites":1,"hunks":[` + strings.Join(hunks, ",") + `]}`
}

const (
	sha64   = "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"
	stampOK = `{"path":"/w/f.txt","size":3,"mtime":1,"ctime":2,"sha256":"` + sha64 + `"}`
)

// The meta of write and edit decodes strictly and validates (tool.DecodeMeta),
// and the presenters then check that it belongs to the call.
func TestDiffMetaDecodeAccepts(t *testing.T) {
	for _, c := range []struct {
		name, raw string
		want      diffMeta
	}{
		{"one hunk", hunkMetaJSON(hunkOK), diffMeta{Path: "f.txt", Sites: 1, Hunks: []diffHunk{
			{OldStart: 3, OldLines: 2, NewStart: 3, NewLines: 1, OldText: "a\nb\n", NewText: "c\n"}}}},
		{"created", `{"path":"f.txt","created":true,"hunks":[]}`, diffMeta{Path: "f.txt", Created: true, Hunks: []diffHunk{}}},
		{"unchanged", `{"path":"f.txt","created":false,"unchanged":true,"hunks":[]}`, diffMeta{Path: "f.txt", Unchanged: true, Hunks: []diffHunk{}}},
		{"all omitted", `{"path":"f.txt","created":false,"sites":3,"hunks":[],"omitted":3}`, diffMeta{Path: "f.txt", Sites: 3, Hunks: []diffHunk{}, Omitted: 3}},
		{"insertion into an empty file", hunkMetaJSON(`{"oldStart":1,"oldLines":0,"newStart":1,"newLines":1,"oldText":"","newText":"x"}`),
			diffMeta{Path: "f.txt", Sites: 1, Hunks: []diffHunk{{OldStart: 1, NewStart: 1, NewLines: 1, NewText: "x"}}}},
		{"with a stamp", `{"path":"f.txt","created":true,"hunks":[],"stamp":` + stampOK + `}`,
			diffMeta{Path: "f.txt", Created: true, Hunks: []diffHunk{}, Stamp: &fileStamp{Path: "/w/f.txt", Size: 3, MTime: 1, CTime: 2, SHA256: sha64}}},
	} {
		got := tool.DecodeMeta[diffMeta](jsontext.Value(c.raw))
		if got == nil {
			t.Errorf("%s: rejected", c.name)
			continue
		}
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(c.want)
		if string(gj) != string(wj) {
			t.Errorf("%s: got %s, want %s", c.name, gj, wj)
		}
	}
}

func TestDiffMetaDecodeRejects(t *testing.T) {
	hunk := func(field, value string) string {
		var m map[string]jsontext.Value
		if err := json.Unmarshal([]byte(hunkOK), &m); err != nil {
			panic(err)
		}
		if value == "" {
			delete(m, field)
		} else {
			m[field] = jsontext.Value(value)
		}
		b, err := json.Marshal(m, json.Deterministic(true))
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	cases := map[string]string{
		"empty":                  ``,
		"not json":               `{`,
		"null":                   `null`,
		"array":                  `[]`,
		"string":                 `"f.txt"`,
		"number":                 `1`,
		"trailing data":          hunkMetaJSON(hunkOK) + `{}`,
		"duplicate member":       `{"path":"f.txt","path":"f.txt","created":true,"hunks":[]}`,
		"missing path":           `{"created":true,"hunks":[]}`,
		"empty path":             `{"path":"","created":true,"hunks":[]}`,
		"other path":             `{"path":"g.txt","created":true,"hunks":[]}`,
		"path not a string":      `{"path":1,"created":true,"hunks":[]}`,
		"missing created":        `{"path":"f.txt","hunks":[]}`,
		"created not a bool":     `{"path":"f.txt","created":"yes","hunks":[]}`,
		"unchanged not a bool":   `{"path":"f.txt","created":false,"unchanged":1,"hunks":[]}`,
		"missing hunks":          `{"path":"f.txt","created":true}`,
		"hunks null":             `{"path":"f.txt","created":true,"hunks":null}`,
		"hunks an object":        `{"path":"f.txt","created":true,"hunks":{}}`,
		"negative sites":         `{"path":"f.txt","created":false,"sites":-1,"hunks":[` + hunkOK + `]}`,
		"fractional omitted":     `{"path":"f.txt","created":false,"omitted":0.5,"hunks":[` + hunkOK + `]}`,
		"sites a string":         `{"path":"f.txt","created":false,"sites":"1","hunks":[` + hunkOK + `]}`,
		"created and unchanged":  `{"path":"f.txt","created":true,"unchanged":true,"hunks":[]}`,
		"created with hunks":     `{"path":"f.txt","created":true,"hunks":[` + hunkOK + `]}`,
		"unchanged with hunks":   `{"path":"f.txt","created":false,"unchanged":true,"hunks":[` + hunkOK + `]}`,
		"created with omitted":   `{"path":"f.txt","created":true,"omitted":1,"hunks":[]}`,
		"a change with nothing":  `{"path":"f.txt","created":false,"hunks":[]}`,
		"hunk not an object":     hunkMetaJSON(`[]`),
		"hunk null":              hunkMetaJSON(`null`),
		"zero oldStart":          hunkMetaJSON(hunk("oldStart", "0")),
		"negative newStart":      hunkMetaJSON(hunk("newStart", "-3")),
		"fractional oldStart":    hunkMetaJSON(hunk("oldStart", "1.5")),
		"huge newStart":          hunkMetaJSON(hunk("newStart", "1e300")),
		"oldStart a string":      hunkMetaJSON(hunk("oldStart", `"3"`)),
		"missing oldStart":       hunkMetaJSON(hunk("oldStart", "")),
		"missing newStart":       hunkMetaJSON(hunk("newStart", "")),
		"negative oldLines":      hunkMetaJSON(hunk("oldLines", "-2")),
		"missing newLines":       hunkMetaJSON(hunk("newLines", "")),
		"oldLines disagree":      hunkMetaJSON(hunk("oldLines", "3")),
		"newLines disagree":      hunkMetaJSON(hunk("newLines", "0")),
		"missing oldText":        hunkMetaJSON(hunk("oldText", "")),
		"newText not a string":   hunkMetaJSON(hunk("newText", "7")),
		"oldText null":           hunkMetaJSON(hunk("oldText", "null")),
		"empty hunk":             hunkMetaJSON(`{"oldStart":1,"oldLines":0,"newStart":1,"newLines":0,"oldText":"","newText":""}`),
		"hunks out of order":     hunkMetaJSON(hunk("oldStart", "10"), hunkOK),
		"hunks overlap":          hunkMetaJSON(hunkOK, hunk("newStart", "4")),
		"new side out of order":  hunkMetaJSON(hunk("newStart", "10"), hunk("oldStart", "20")),
		"invalid UTF-8 in text":  strings.Replace(hunkMetaJSON(hunkOK), `"c\n"`, "\"\xff\\n\"", 1),
		"hunk with extra nested": hunkMetaJSON(hunk("oldText", `{"a":1}`)),
		// v2 decodes integers spelled as integers only, and refuses what it does not know.
		"integral float spelling": hunkMetaJSON(hunk("oldStart", "3.0")),
		"unknown member":          `{"path":"f.txt","created":true,"hunks":[],"later":1}`,
		"unknown hunk member":     hunkMetaJSON(strings.Replace(hunkOK, "{", `{"x":1,`, 1)),
		"null sites":              `{"path":"f.txt","created":false,"sites":null,"hunks":[` + hunkOK + `]}`,
		"null created":            `{"path":"f.txt","created":null,"hunks":[]}`,
		"stamp null":              `{"path":"f.txt","created":true,"hunks":[],"stamp":null}`,
		"stamp not an object":     `{"path":"f.txt","created":true,"hunks":[],"stamp":"x"}`,
		"stamp relative path":     `{"path":"f.txt","created":true,"hunks":[],"stamp":` + strings.Replace(stampOK, "/w/f.txt", "w/f.txt", 1) + `}`,
		"stamp unclean path":      `{"path":"f.txt","created":true,"hunks":[],"stamp":` + strings.Replace(stampOK, "/w/f.txt", "/w/../f.txt", 1) + `}`,
		"stamp negative size":     `{"path":"f.txt","created":true,"hunks":[],"stamp":` + strings.Replace(stampOK, `"size":3`, `"size":-3`, 1) + `}`,
		"stamp short hash":        `{"path":"f.txt","created":true,"hunks":[],"stamp":` + strings.Replace(stampOK, sha64, "abc", 1) + `}`,
		"stamp upper-case hash":   `{"path":"f.txt","created":true,"hunks":[],"stamp":` + strings.Replace(stampOK, sha64, strings.ToUpper(sha64), 1) + `}`,
		"stamp missing mtime":     `{"path":"f.txt","created":true,"hunks":[],"stamp":` + strings.Replace(stampOK, `"mtime":1,`, "", 1) + `}`,
	}
	editArgs := []byte(`{"path":"f.txt","old_string":"a\nb\n","new_string":"c\n","replace_all":true}`)
	writeArgs := []byte(`{"path":"f.txt","content":"c\n"}`)
	for name, raw := range cases {
		if name != "other path" {
			if m := tool.DecodeMeta[diffMeta](jsontext.Value(raw)); m != nil {
				t.Errorf("%s: decoded %s as %+v", name, raw, m)
			}
		}
		r := tool.Result{Content: []card.Content{card.Text("ok")}, Meta: jsontext.Value(raw)}
		if c := Edit().PresentResult(editArgs, r); c != nil {
			t.Errorf("%s: edit presented %s as %#v", name, raw, c)
		}
		if c := Write().PresentResult(writeArgs, r); c != nil {
			t.Errorf("%s: write presented %s as %#v", name, raw, c)
		}
		if c, ok := Edit().PresentCall(editArgs, jsontext.Value(raw)).(*card.DiffCall); !ok || c.Diffs[0].OldText == nil || *c.Diffs[0].OldText != "a\nb\n" {
			t.Errorf("%s: a damaged preview did not give the seed's call card: %#v", name, c)
		}
	}
}

func TestHunkOmittedNote(t *testing.T) {
	for _, c := range []struct {
		omitted, shown int
		unit, want     string
	}{
		{0, 3, "site", ""},
		{1, 0, "hunk", "1 hunk not shown"},
		{2, 0, "site", "2 sites not shown"},
		{12, 500, "site", "12 more sites not shown"},
		{1, 5, "site", "1 more site not shown"},
	} {
		if got := hunkOmittedNote(c.omitted, c.shown, c.unit); got != c.want {
			t.Errorf("%+v: %q", c, got)
		}
	}
}

// Each presenter returns nil for error results and for meta it cannot trust.
func TestPresentResultFallsBack(t *testing.T) {
	good := tool.Result{Content: []card.Content{card.Text("ok")}, Meta: jsontext.Value(hunkMetaJSON(hunkOK))}
	editArgs := []byte(`{"path":"f.txt","old_string":"a\nb\n","new_string":"c\n"}`)
	writeArgs := []byte(`{"path":"f.txt","content":"c\n"}`)
	if Edit().PresentResult(editArgs, good) == nil {
		t.Fatal("good edit meta must present")
	}
	cases := []struct {
		name string
		tl   tool.Tool
		args []byte
		r    tool.Result
	}{
		{"edit error result", Edit(), editArgs, tool.Result{Content: good.Content, IsError: true, Meta: good.Meta}},
		{"edit without meta", Edit(), editArgs, tool.Result{Content: good.Content}},
		{"edit malformed meta", Edit(), editArgs, tool.Result{Content: good.Content, Meta: jsontext.Value(`{"path":"f.txt"}`)}},
		{"edit meta for another path", Edit(), []byte(`{"path":"g.txt","old_string":"a","new_string":"b"}`), good},
		{"edit bad arguments", Edit(), []byte(`{"path":1}`), good},
		{"edit several sites without replace_all", Edit(), editArgs, tool.Result{Meta: jsontext.Value(
			`{"path":"f.txt","created":false,"sites":2,"hunks":[` + hunkOK + `]}`)}},
		{"edit without sites", Edit(), editArgs, tool.Result{Meta: jsontext.Value(
			`{"path":"f.txt","created":false,"hunks":[` + hunkOK + `]}`)}},
		{"edit created with old_string", Edit(), editArgs, tool.Result{Meta: jsontext.Value(`{"path":"f.txt","created":true,"hunks":[]}`)}},
		{"edit unchanged", Edit(), editArgs, tool.Result{Meta: jsontext.Value(`{"path":"f.txt","created":false,"unchanged":true,"hunks":[]}`)}},
		{"write error result", Write(), writeArgs, tool.Result{IsError: true, Meta: jsontext.Value(`{"path":"f.txt","created":true,"hunks":[]}`)}},
		{"write without meta", Write(), writeArgs, tool.Result{}},
		{"write edit meta", Write(), writeArgs, good},
		{"write meta not an object", Write(), writeArgs, tool.Result{Meta: jsontext.Value(`[1]`)}},
	}
	for _, c := range cases {
		if got := c.tl.PresentResult(c.args, c.r); got != nil {
			t.Errorf("%s: presented %#v", c.name, got)
		}
	}
}

func TestPresentCalls(t *testing.T) {
	c, ok := Edit().PresentCall([]byte(`{"path":"f.txt","old_string":"","new_string":"x"}`), nil).(*card.DiffCall)
	if !ok || c.Diffs[0].OldText != nil || c.Title != "Edit f.txt" {
		t.Fatalf("empty old_string: %#v", c)
	}
	c, ok = Edit().PresentCall([]byte(`{"path":"f.txt","old_string":"a","new_string":"b","replace_all":true}`), nil).(*card.DiffCall)
	if !ok || c.Diffs[0].OldText == nil || *c.Diffs[0].OldText != "a" || c.Diffs[0].NewText != "b" {
		t.Fatalf("edit call: %#v", c)
	}
	w, ok := Write().PresentCall([]byte(`{"path":"f.txt","content":"x"}`), nil).(*card.DiffCall)
	if !ok || w.Diffs[0].OldText != nil || w.Diffs[0].NewText != "x" || w.Locations[0].Path != "f.txt" {
		t.Fatalf("write call: %#v", w)
	}
	if g, ok := Write().PresentCall([]byte(`{"content":"x"}`), nil).(*card.GenericCall); !ok || g.Title != "write" {
		t.Fatalf("bad arguments: %#v", Write().PresentCall([]byte(`{"content":"x"}`), nil))
	}
}

func TestPresentWriteOmittedHunks(t *testing.T) {
	r := tool.Result{Meta: jsontext.Value(`{"path":"f.txt","created":false,"hunks":[],"omitted":1}`)}
	c, ok := Write().PresentResult([]byte(`{"path":"f.txt","content":"x"}`), r).(*card.DiffResult)
	if !ok || c.Title != "Write f.txt (1 hunk not shown)" || c.Diffs == nil || len(c.Diffs) != 0 {
		t.Fatalf("%#v", c)
	}
}
