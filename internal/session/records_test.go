package session

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/dsh-dev/dsh/internal/card"
)

// TestModelAndImageRecords: model records and prompts with images round-trip;
// a model record without a model and prompt content that is not an image are
// refused on write (and so could not be read either).
func TestModelAndImageRecords(t *testing.T) {
	l, err := Create(t.TempDir(), "20260101-000000-abcdefgh", "/src", Options{})
	if err != nil {
		t.Fatal(err)
	}
	good := []Record{
		{Type: TypeModel, Model: "claude-haiku-4-5", Thinking: "high"},
		{Type: TypeModel, Model: "gpt-5"},
		{Type: TypeUser, Text: "look", Content: []card.Content{card.Image("image/png", "iVBORw0KGgo=")}},
	}
	for _, r := range good {
		if _, err := l.Put(r); err != nil {
			t.Fatalf("put %+v: %v", r, err)
		}
	}
	for _, r := range []Record{
		{Type: TypeModel, Thinking: "high"},
		{Type: TypeUser, Text: "x", Content: []card.Content{card.Text("not an image")}},
		{Type: TypeUser, Text: "x", Content: []card.Content{{Type: "image", MimeType: "image/png"}}},
		{Type: TypeUser, Text: "x", Content: []card.Content{{Type: "image", Data: "AAAA"}}},
	} {
		if _, err := l.Put(r); err == nil {
			t.Errorf("put %+v: no error", r)
		}
	}
	path := l.Path()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadFile(filepath.Clean(path))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs[1:] {
		r.Time = good[i].Time
		if !reflect.DeepEqual(r, good[i]) {
			t.Errorf("record %d read back as %+v, want %+v", i, r, good[i])
		}
	}
}
