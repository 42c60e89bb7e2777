package chat

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/tool"
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
		m.running, m.status.State = true, host.StateWorking
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

// A long plan's box fits the view whole: its top edge, its choices and its
// keys all show, the plan cut to what fits.
func TestPlanBoxFits(t *testing.T) {
	var plan strings.Builder
	plan.WriteString("# Plan\n\n")
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&plan, "%d. Step number %d of the plan, which does something useful.\n", i, i)
	}
	choices := []card.Choice{{ID: "default", Label: "Yes, and ask before each change", Description: "continue in the default mode"},
		{ID: "accept-edits", Label: "Yes, and accept file edits", Description: "continue in the accept-edits mode: commands are still asked about"},
		{ID: "keep", Label: "No, keep planning", Description: "say what to change"}}
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		m := New(Config{Width: size[0], Height: size[1], History: &History{}}, Opened{})
		q := host.NewQuestion(agent.QuestionRequest{CallID: "p1", Tool: "plan", Card: &card.PlanCall{Title: "Plan", Plan: plan.String()},
			Question: tool.Question{Text: "Implement this plan?", Choices: choices, FreeText: true}})
		m.showQuestion(q)
		v := ansi.Strip(m.view().Content)
		for _, want := range []string{"╭─ Implement this plan?", "3. No, keep planning", "Ctrl-E: review all", "more rows"} {
			if !strings.Contains(v, want) {
				t.Errorf("%dx%d: no %q in the view:\n%s", size[0], size[1], want, v)
			}
		}
		if rows := strings.Count(v, "\n") + 1; rows > viewRows(size[1]) {
			t.Errorf("%dx%d: the view takes %d rows", size[0], size[1], rows)
		}
	}
}

// Ctrl-L draws the view again from scratch.
func TestCtrlLRepaints(t *testing.T) {
	h := newHarness(t, 80)
	h.send(key('l', tea.ModCtrl))
	if h.last == nil {
		t.Fatal("Ctrl-L does nothing")
	}
	if msg := h.last(); fmt.Sprintf("%T", msg) != fmt.Sprintf("%T", tea.ClearScreen()) {
		t.Errorf("Ctrl-L gives %T, want the screen cleared and the view drawn again", msg)
	}
}
