package diffview

import (
	"slices"
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
