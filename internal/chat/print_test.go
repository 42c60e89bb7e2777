package chat

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestPrintChunks checks that what is printed above the view goes in pieces
// the renderer can insert without pushing the view into the scrollback: none
// taller than the room left, counting wrapped lines as rows, and nothing lost
// or reordered.
func TestPrintChunks(t *testing.T) {
	long := strings.Repeat("x", 25) // three rows at 10 columns
	for _, tc := range []struct {
		name  string
		text  string
		width int
		room  int
		want  []string
	}{
		{"fits", "a\nb", 80, 3, []string{"a\nb"}},
		{"split", "1\n2\n3\n4\n5\n6\n7", 80, 3, []string{"1\n2\n3", "4\n5\n6", "7"}},
		{"a wrapped line counts its rows", "a\n" + long + "\nb", 10, 3, []string{"a", long, "b"}},
		{"a line taller than the room goes alone", long + long + long + long, 10, 3, []string{long + long + long + long}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := printChunks(tc.text, tc.width, tc.room)
			if strings.Join(got, "\n") != tc.text {
				t.Fatalf("the chunks %q do not join into the text", got)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("chunk %d: got %q, want %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// TestViewLeavesRoom checks that the view never takes the rows a print needs,
// however much streams into it: a long answer, many running calls.
func TestViewLeavesRoom(t *testing.T) {
	for _, h := range []int{5, 24, 40} {
		m := New(Config{Width: 80, Height: h, History: &History{}}, Opened{})
		m.running = true
		for i := range 60 {
			m.stream.WriteString("line of the model's answer\n\n")
			id := string(rune('a' + i%26))
			m.live[id] = &liveCall{title: "call " + id, started: true, tail: "1\n2\n3\n4\n"}
			m.liveOrder = append(m.liveOrder, id)
		}
		v := m.view().Content
		if rows := strings.Count(v, "\n") + 1; rows > viewRows(h) || rows+printRoom(h) > max(h, 6) {
			t.Errorf("at %d rows the view takes %d rows, leaving %d to print", h, rows, h-rows)
		}
		if !strings.Contains(ansi.Strip(v), "working") {
			t.Errorf("at %d rows the status line is cut off:\n%s", h, v)
		}
	}
}
