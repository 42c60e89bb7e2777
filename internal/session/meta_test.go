package session

import (
	"path/filepath"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/jsonfast"
	"github.com/dsh-dev/dsh/internal/tool"
)

// metaReader reads the meta of the tools it takes (all when take is nil) and
// notes, for each, the tool whose result it was.
type metaReader struct {
	take map[string]bool
	read []string
}

func (m *metaReader) ReadMeta(name string, d *jsonfast.Reader) (jsontext.Value, bool) {
	if m.take != nil && !m.take[name] {
		return nil, false
	}
	start := d.Offset()
	if !d.Skip(0) {
		d.Seek(start)
		return nil, false
	}
	m.read = append(m.read, name)
	return append(jsontext.Value(nil), d.Since(start)...), true
}

// TestOpenReadsMeta: with a MetaReader, Open has each result's meta read in
// the record's own pass, by the tool of its call, and yields the records it
// yields without one.
func TestOpenReadsMeta(t *testing.T) {
	res := func(meta string) *tool.Result {
		return &tool.Result{Content: []card.Content{card.Text("out")}, Meta: jsontext.Value(meta)}
	}
	recs := []Record{
		{Type: TypeUser, Text: "go"},
		{Type: TypeToolCall, CallID: "a", Name: "read", Args: jsontext.Value(`{"path":"x"}`)},
		{Type: TypeToolCall, CallID: "b", Name: "grep", Args: jsontext.Value(`{"pattern":"y"}`)},
		{Type: TypeToolResult, CallID: "b", Result: res(`{"files":[{"path":"x","n":[1,2]}],"total":1}`)},
		{Type: TypeToolResult, CallID: "a", Result: res(`{"path":"x","lines":[]}`)},
		{Type: TypeToolResult, CallID: "c", Result: res(`{"orphan":true}`)}, // no call: read as raw JSON
		{Type: TypeToolCall, CallID: "d", Name: "bash", Args: jsontext.Value(`{"command":"true"}`)},
		{Type: TypeToolResult, CallID: "d", Result: &tool.Result{Content: []card.Content{card.Text("")}}},
		{Type: TypeTurnEnd, StopReason: "end_turn"},
	}
	tests := []struct {
		name string
		take map[string]bool
		want []string
	}{
		{"every tool's", nil, []string{"grep", "read"}},
		{"some tools'", map[string]bool{"read": true}, []string{"read"}},
		{"none", map[string]bool{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			l := create(t, dir, "s1", Options{})
			appendAll(t, l, recs)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "s1.jsonl")
			want, err := ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			mr := &metaReader{take: tt.take}
			var got []Record
			o, err := Open(path, Options{Meta: mr}, func(r Record) error { got = append(got, r); return nil })
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Open with a MetaReader (-ReadFile +Open):\n%s", diff)
			}
			if !cmp.Equal(mr.read, tt.want) {
				t.Errorf("meta read for %q, want %q", mr.read, tt.want)
			}
		})
	}
}
