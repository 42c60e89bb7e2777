package session

import (
	"strings"
	"testing"
)

// TestListTitle: a listing's title is the last title record's, wherever its
// line falls in the reads that count the lines — across a read's edge too.
func TestListTitle(t *testing.T) {
	const readSize = 256 << 10 // tail's buffer
	for _, tc := range []struct {
		name string
		at   int64 // where the last title's line starts, relative to the first read's end; 0: anywhere
	}{
		{"within a read", 0},
		{"straddling a read's end", -5},
		{"right at a read's end", 0 + 1},
		{"its newline at a read's end", -int64(len(`{"type":"title","time":"2025-03-14T09:00:00Z","text":"B"}`)) - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			l := create(t, dir, "s", Options{})
			appendAll(t, l, []Record{{Type: TypeUser, Text: "the prompt"}, {Type: TypeTitle, Text: "A"}})
			if tc.at != 0 {
				// A filler whose line ends where the title's should start.
				before := l.Size()
				appendAll(t, l, []Record{{Type: TypeAssistant, Text: "x"}})
				overhead := l.Size() - before - 1
				n := readSize + tc.at - 1 - l.Size() - overhead
				if tc.at == 1 {
					n = readSize - l.Size() - overhead
				}
				appendAll(t, l, []Record{{Type: TypeAssistant, Text: strings.Repeat("y", int(n))}})
			}
			appendAll(t, l, []Record{{Type: TypeTitle, Text: "B"}, {Type: TypeTurnEnd}})
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			infos, err := List(dir)
			if err != nil || len(infos) != 1 {
				t.Fatalf("List: %v %v", infos, err)
			}
			if in := infos[0]; in.Title != "B" || in.Name() != "B" || in.FirstPrompt != "the prompt" {
				t.Errorf("title %q, name %q, first prompt %q; want the last title, B", in.Title, in.Name(), in.FirstPrompt)
			}
		})
	}
}

func TestInfoName(t *testing.T) {
	if n := (Info{FirstPrompt: "p"}).Name(); n != "p" {
		t.Errorf("untitled: %q", n)
	}
	if n := (Info{FirstPrompt: "p", Title: "t"}).Name(); n != "t" {
		t.Errorf("titled: %q", n)
	}
}
