package cli

import (
	"io"
	"strings"
	"sync"
	"time"

	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/termui"
)

// spinner shows on a terminal's stderr that dsh run is working, and at what: a
// refused connection or a slow model is not a silent wait. Every method is a
// no-op on a nil spinner (stderr is not a terminal).
type spinner struct {
	w      io.Writer
	mu     sync.Mutex
	text   string
	drawn  bool // the spinner's line is on screen
	paused int
	frame  int
	done   chan struct{}
	once   sync.Once
}

var spinFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// spinWidth bounds the spinner's line: it is redrawn in place, so it must not
// wrap.
const spinWidth = 60

func newSpinner(w io.Writer) *spinner {
	s := &spinner{w: w, done: make(chan struct{})}
	go s.run()
	return s
}

func (s *spinner) run() {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
			s.mu.Lock()
			if s.paused == 0 && s.text != "" {
				s.frame = (s.frame + 1) % len(spinFrames)
				line := spinFrames[s.frame] + " " + s.text
				if r := []rune(line); len(r) > spinWidth {
					line = string(r[:spinWidth-1]) + "…"
				}
				_, _ = io.WriteString(s.w, "\r\x1b[K"+line)
				s.drawn = true
			}
			s.mu.Unlock()
		}
	}
}

// clearLocked takes the spinner's line off the screen.
func (s *spinner) clearLocked() {
	if s.drawn {
		_, _ = io.WriteString(s.w, "\r\x1b[K")
		s.drawn = false
	}
}

func (s *spinner) set(text string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.text = text
	s.mu.Unlock()
}

// record follows what the turn is doing.
func (s *spinner) record(rec session.Record, _ *termConsumer) {
	if s == nil {
		return
	}
	switch rec.Type {
	case session.TypeToolCall:
		s.set("running " + rec.Name)
	case session.TypeProgress:
		line := strings.TrimRight(rec.Chunk, "\r\n")
		if i := strings.LastIndexAny(line, "\r\n"); i >= 0 {
			line = line[i+1:]
		}
		if line != "" {
			s.set("running " + rec.Name + ": " + termui.Sanitize(line))
		}
	case session.TypeToolResult, session.TypeAssistant, session.TypeThinking:
		s.set("waiting for the model")
	case session.TypeHeader, session.TypeUser, session.TypePlan, session.TypeTurnEnd,
		session.TypeMode, session.TypeAllow, session.TypeDamaged, session.TypeCompaction, session.TypeInstructions,
		session.TypeModel, session.TypeCheckpoint, session.TypeRestore, session.TypeHook, session.TypeCommand, session.TypeReply, session.TypeDecision, session.TypeTitle:
	}
}

// pause clears the line and keeps it off (a permission prompt is asked).
func (s *spinner) pause() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.paused++
	s.clearLocked()
	s.mu.Unlock()
}

func (s *spinner) resume() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.paused--
	s.mu.Unlock()
}

// stop ends the spinner and clears its line.
func (s *spinner) stop() {
	if s == nil {
		return
	}
	s.once.Do(func() { close(s.done) })
	s.mu.Lock()
	s.text = ""
	s.clearLocked()
	s.mu.Unlock()
}

// guard returns w with the spinner's line cleared before each write, so output
// never lands on the spinner's line.
func (s *spinner) guard(w io.Writer) io.Writer {
	return guarded{s, w}
}

type guarded struct {
	s *spinner
	w io.Writer
}

func (g guarded) Write(p []byte) (int, error) {
	g.s.mu.Lock()
	defer g.s.mu.Unlock()
	g.s.clearLocked()
	return g.w.Write(p)
}
