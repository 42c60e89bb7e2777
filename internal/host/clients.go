package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/session"
)

// Joined is what a client that joins a live session late (Join) needs to
// catch up: how much of the log holds the records put before its events, and
// the permission requests and questions that wait.
type Joined struct {
	LogSize int64
	Waiting []Event // KindPermission and KindQuestion events
}

// Join is Subscribe for a client that joins the session while it lives (its
// control socket's): at the moment fn's events start, it notes how much of
// the log holds the records before them and what waits for an answer, so the
// client misses nothing and sees nothing twice.
func (s *Session) Join(fn func(Event)) (Joined, *Subscription) {
	var j Joined
	sub := s.bus.subscribeAt(fn, func() {
		j.LogSize = s.log.Size()
		j.Waiting = slices.Clone(s.bus.waiting)
	}, false)
	return j, sub
}

// logDecision logs an answer to a permission request or a question, and who
// gave it: with many clients on a session, the first answer wins, and replay
// says whose it was.
func (s *Session) logDecision(callID, decision, from string) error {
	if from == "" {
		from = s.o.Client
	}
	if _, err := s.put(session.Record{Type: session.TypeDecision, CallID: callID, Decision: decision, From: from}); err != nil {
		return fmt.Errorf("log the decision: %w", err)
	}
	return nil
}

// decisionName is a decision as the log spells it.
func decisionName(d agent.Decision) string {
	switch d {
	case agent.AllowOnce:
		return session.DecisionAllow
	case agent.AllowAlways:
		return session.DecisionAlways
	case agent.Reject:
	}
	return session.DecisionReject
}

// goLive lets other clients join the session (Options.Live): a session that
// cannot be joined still works, so a failure is a warning.
func (s *Session) goLive() {
	if s.o.Live == nil || s.o.sub != nil || s.isClosed() {
		return
	}
	c, err := s.o.Live(s)
	if err != nil {
		s.o.Warn(fmt.Sprintf("other clients cannot join this session: %v", err))
		return
	}
	s.mu.Lock()
	closed := s.closed // GoLive may come after Close, which took the closers
	if !closed {
		s.o.Closers = append(s.o.Closers, c)
	}
	s.mu.Unlock()
	if closed {
		_ = c.Close() // nobody joined a socket that was just made
	}
}

// GoLive starts what Create held back for LiveLater: the first checkpoint
// walk, and the control socket, before which other clients are told the
// session is not live. It does nothing after the first call, for a session
// without LiveLater, or once the session is closed.
func (s *Session) GoLive() {
	if !s.o.LiveLater {
		return
	}
	s.liveOnce.Do(func() {
		if s.isClosed() {
			return
		}
		s.startCheckpoints()
		s.goLive()
	})
}

// Client is the consumer this process shows the session in (Options.Client).
func (s *Session) Client() string { return s.o.Client }

// Title is the session's name, the last it was given ("" for none).
func (s *Session) Title() string {
	s.titleMu.Lock()
	defer s.titleMu.Unlock()
	return s.title
}

func (s *Session) foldTitle(r session.Record) {
	if r.Type == session.TypeTitle {
		s.titleMu.Lock()
		s.title = r.Text
		s.titleMu.Unlock()
	}
}

// MaxTitle is the longest title a session may have, in bytes.
const MaxTitle = 200

// CheckTitle says whether title can name a session: one line of text, not
// blank, not too long.
func CheckTitle(title string) error {
	switch {
	case len(title) > MaxTitle:
		return fmt.Errorf("a title has at most %d bytes", MaxTitle)
	case strings.TrimSpace(title) == "":
		return errors.New("the title is empty")
	}
	for _, r := range title {
		if r < ' ' || r == 0x7f || r == utf8.RuneError {
			return errors.New("a title is one line of text")
		}
	}
	return nil
}

// Rename names the session title (/rename, dsh sessions rename, a client's
// rename): a title record, which lists and pickers show.
func (s *Session) Rename(title string) error {
	title = strings.TrimSpace(title)
	if err := CheckTitle(title); err != nil {
		return err
	}
	if s.isClosed() {
		return ErrClosed
	}
	r, err := s.put(session.Record{Type: session.TypeTitle, Text: title})
	if err != nil {
		return fmt.Errorf("rename: %w", err)
	}
	s.foldTitle(r)
	return nil
}

// renameCommand is /rename [TITLE].
func (s *Session) renameCommand(_ context.Context, args string) (Reply, error) {
	if args == "" {
		if t := s.Title(); t != "" {
			return Reply{Text: "This session is called “" + t + "”. /rename TITLE names it anew."}, nil
		}
		return Reply{Text: "Name this session: /rename TITLE."}, nil
	}
	if err := s.Rename(args); err != nil {
		return Reply{Text: "Cannot rename the session: " + err.Error() + "."}, nil
	}
	return Reply{Text: "Renamed the session: " + s.Title()}, nil
}

// RenameSession names session id of dir while no dsh has it open (one that
// has it renames it itself, asked through its control socket): a title
// record appended under the log's writer lock.
func RenameSession(dir, id, title string) error {
	title = strings.TrimSpace(title)
	if err := CheckTitle(title); err != nil {
		return err
	}
	if !session.ValidID(id) {
		return fmt.Errorf("%w %q", ErrNoSession, id)
	}
	path := filepath.Join(dir, id+".jsonl")
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("%w %q", ErrNoSession, id)
	}
	l, err := session.Open(path, session.Options{}, nil)
	if err != nil {
		return fmt.Errorf("rename: %w", err)
	}
	_, err = l.Put(session.Record{Type: session.TypeTitle, Text: title})
	if err != nil {
		err = fmt.Errorf("rename: %w", err)
	}
	return errors.Join(err, l.Close())
}
