package diffview

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/card"
)

func TestLines(t *testing.T) {
	type L = Line
	tests := []struct {
		name string
		d    card.FileDiff
		want []Line
	}{
		{"new file", card.FileDiff{NewText: "a\nb\n"},
			[]L{{Insert, "a", 0, 1}, {Insert, "b", 0, 2}}},
		{"new empty file", card.FileDiff{NewText: ""}, nil},
		{"replace middle", card.FileDiff{OldText: card.Ptr("a\nb\nc\n"), NewText: "a\nB\nc\n", OldStart: 10, NewStart: 12},
			[]L{{Context, "a", 10, 12}, {Delete, "b", 11, 0}, {Insert, "B", 0, 13}, {Context, "c", 12, 14}}},
		{"delete all", card.FileDiff{OldText: card.Ptr("x\ny"), NewText: ""},
			[]L{{Delete, "x", 1, 0}, {Delete, "y", 2, 0}}},
		{"no final newline", card.FileDiff{OldText: card.Ptr("a\nb"), NewText: "a\nc"},
			[]L{{Context, "a", 1, 1}, {Delete, "b", 2, 0}, {Insert, "c", 0, 2}}},
		{"crlf", card.FileDiff{OldText: card.Ptr("a\r\nb\r\n"), NewText: "a\r\nc\r\n"},
			[]L{{Context, "a", 1, 1}, {Delete, "b", 2, 0}, {Insert, "c", 0, 2}}},
		{"unchanged", card.FileDiff{OldText: card.Ptr("same\n"), NewText: "same\n"},
			[]L{{Context, "same", 1, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Lines(tt.d); !slices.Equal(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestHeaderAndStat(t *testing.T) {
	tests := []struct {
		d        card.FileDiff
		want     string
		ins, del int
	}{
		{card.FileDiff{NewText: "a\nb\n", NewStart: 1}, "@@ -0,0 +1,2 @@", 2, 0},
		{card.FileDiff{OldText: card.Ptr("a\nb\n"), NewText: "a\nc\nd\n", OldStart: 5, NewStart: 7}, "@@ -5,2 +7,3 @@", 2, 1},
		{card.FileDiff{OldText: card.Ptr("gone\n"), NewText: "", OldStart: 4, NewStart: 4}, "@@ -4,1 +3,0 @@", 0, 1},
		{card.FileDiff{OldText: card.Ptr(""), NewText: "x\n", OldStart: 3, NewStart: 3}, "@@ -2,0 +3,1 @@", 1, 0},
	}
	for _, tt := range tests {
		lines := Lines(tt.d)
		if got := Header(tt.d, lines); got != tt.want {
			t.Errorf("Header(%+v) = %q, want %q", tt.d, got, tt.want)
		}
		if ins, del := Stat(lines); ins != tt.ins || del != tt.del {
			t.Errorf("Stat(%+v) = +%d -%d, want +%d -%d", tt.d, ins, del, tt.ins, tt.del)
		}
	}
}

// A whole-file diff is cut into the hunks that change, with their context
// and where they start; a created file and an unchanged one stay whole.
func TestHunks(t *testing.T) {
	var old strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&old, "line %d\n", i)
	}
	nw := strings.Replace(strings.Replace(old.String(), "line 5\n", "line five\n", 1), "line 30\n", "", 1)
	for _, tc := range []struct {
		name string
		d    card.FileDiff
		want []string // the hunks' headers
	}{
		{"two changes far apart", card.FileDiff{Path: "a", OldText: card.Ptr(old.String()), NewText: nw},
			[]string{"@@ -2,7 +2,7 @@", "@@ -27,7 +27,6 @@"}},
		{"created", card.FileDiff{Path: "a", NewText: "x\n"}, []string{"@@ -0,0 +1,1 @@"}},
		{"unchanged", card.FileDiff{Path: "a", OldText: card.Ptr("x\n"), NewText: "x\n"}, []string{"@@ -1,1 +1,1 @@"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs := Hunks(tc.d, 3)
			var got []string
			for _, h := range hs {
				got = append(got, Header(h, Lines(h)))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("hunks %q, want %q", got, tc.want)
			}
		})
	}
	hs := Hunks(card.FileDiff{Path: "a", OldText: card.Ptr(old.String()), NewText: nw}, 3)
	if l := Lines(hs[1]); l[3].Op != Delete || l[3].Text != "line 30" || l[3].Old != 30 {
		t.Errorf("the second hunk's change is %+v, want line 30 deleted at 30", l[3])
	}
}
