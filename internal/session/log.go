package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// DefaultProgressCap is how many bytes of progress output one call persists.
const DefaultProgressCap = 256 << 10

// Options tune a Log. The zero value is ready to use.
type Options struct {
	Now func() time.Time // stamps records without a time; default time.Now
	// ProgressCap is the number of progress bytes persisted per call: 0 means
	// DefaultProgressCap, a negative value persists none. Live subscribers see all.
	ProgressCap int
}

// Log is an open session log: the append-only writer and the live event stream.
// Its methods are safe for concurrent use.
type Log struct {
	path string
	now  func() time.Time
	cap  int

	mu       sync.Mutex
	f        *os.File
	size     int64          // bytes of complete lines, to undo a failed write
	recs     []Record       // persisted records, header first
	progress map[string]int // persisted progress bytes per call; -1 once over the cap
	subs     map[*sub]struct{}
	closed   bool
	broken   error // a write that could not be undone: the log takes no more
}

type sub struct {
	q    []Record
	wake chan struct{}
}

func (o Options) normalize() (func() time.Time, int) {
	now, c := o.Now, o.ProgressCap
	if now == nil {
		now = time.Now
	}
	if c == 0 {
		c = DefaultProgressCap
	}
	return now, max(c, 0)
}

// Create makes dir if needed and starts the log DIR/ID.jsonl with its header.
func Create(dir, id, cwd string, o Options) (_ *Log, err error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("invalid session id %q", id)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create session dir: %w", err)
	}
	path := filepath.Join(dir, id+".jsonl")
	// Session logs hold code and command output: readable by the owner only.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create session log: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, f.Close(), os.Remove(path))
		}
	}()
	if err := lockFile(f); err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	l := newLog(path, f, o)
	h := Record{Type: TypeHeader, Version: FormatVersion, SessionID: id, Cwd: cwd}
	if err := l.Append(h); err != nil {
		return nil, err
	}
	syncDir(dir)
	return l, nil
}

// Open reopens an existing log for appending. A torn last line is truncated away;
// a corrupt line elsewhere or a newer format ([*FormatError]) is refused.
func Open(path string, o Options) (_ *Log, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("open session log: %w", err)
	}
	defer func() {
		if err != nil {
			_ = f.Close() // the error that matters is err
		}
	}()
	if err := lockFile(f); err != nil {
		return nil, fmt.Errorf("session log %s: %w", path, err)
	}
	recs, off, err := read(f, path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > off {
		if err := f.Truncate(off); err != nil {
			return nil, fmt.Errorf("repair torn line of %s: %w", path, err)
		}
		if err := f.Sync(); err != nil {
			return nil, fmt.Errorf("repair torn line of %s: %w", path, err)
		}
	}
	l := newLog(path, f, o)
	l.recs, l.size = recs, off
	for _, r := range recs {
		switch r.Type {
		case TypeProgress:
			l.countProgress(r)
		case TypeToolResult:
			delete(l.progress, r.CallID)
		case TypeHeader, TypeUser, TypeAssistant, TypeThinking, TypeToolCall, TypePlan, TypeTurnEnd:
		}
	}
	return l, nil
}

func newLog(path string, f *os.File, o Options) *Log {
	now, c := o.normalize()
	return &Log{path: path, now: now, cap: c, f: f, progress: map[string]int{}, subs: map[*sub]struct{}{}}
}

// ID returns the session id recorded in the header.
func (l *Log) ID() string { return l.Header().SessionID }

// Path returns the log file's path.
func (l *Log) Path() string { return l.path }

// Header returns the header record.
func (l *Log) Header() Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.recs[0]
}

// Records returns every persisted record so far, in order, header first. The
// records share their slices with the log and must not be modified.
func (l *Log) Records() []Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.recs)
}

// Append writes r as one line with a single write and delivers it to subscribers.
// A zero r.Time is stamped from Options.Now. The file is synced after the header,
// tool results and turn ends. Progress beyond the per-call cap is delivered but not
// persisted. Only Create writes a header.
func (l *Log) Append(r Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return errors.New("session log is closed")
	case l.broken != nil:
		return l.broken
	case r.Type == TypeHeader && len(l.recs) > 0:
		return errors.New("session log already has a header")
	}
	if r.Time.IsZero() {
		r.Time = l.now()
	}
	if err := validate(&r); err != nil {
		return fmt.Errorf("session log: %w", err)
	}
	line, rec, err := encode(r)
	if err != nil {
		return fmt.Errorf("session log: %w", err)
	}
	persist := true
	switch r.Type {
	case TypeProgress:
		persist = l.countProgress(rec)
	case TypeToolResult:
		delete(l.progress, r.CallID)
	case TypeHeader, TypeUser, TypeAssistant, TypeThinking, TypeToolCall, TypePlan, TypeTurnEnd:
	}
	if persist {
		if err := l.write(line, r.Type); err != nil {
			return err
		}
		l.recs = append(l.recs, rec)
	}
	for s := range l.subs {
		s.q = append(s.q, rec)
		s.notify()
	}
	return nil
}

// countProgress accounts r against its call's cap and says whether it fits. Once a
// chunk does not fit, the call persists no more, so what is persisted is a prefix.
func (l *Log) countProgress(r Record) bool {
	used := l.progress[r.CallID]
	if used < 0 || used+len(r.Chunk) > l.cap {
		l.progress[r.CallID] = -1
		return false
	}
	l.progress[r.CallID] = used + len(r.Chunk)
	return true
}

func (l *Log) write(line []byte, t RecordType) error {
	if _, err := l.f.Write(line); err != nil {
		// Undo a partial line so that the next append does not follow garbage.
		if terr := l.f.Truncate(l.size); terr != nil {
			l.broken = fmt.Errorf("session log %s is damaged (write: %w; repair: %w)", l.path, err, terr)
		}
		return fmt.Errorf("session log %s: write: %w", l.path, err)
	}
	l.size += int64(len(line))
	switch t {
	case TypeHeader, TypeToolResult, TypeTurnEnd:
		if err := l.f.Sync(); err != nil {
			return fmt.Errorf("session log %s: sync: %w", l.path, err)
		}
	case TypeUser, TypeAssistant, TypeThinking, TypeToolCall, TypeProgress, TypePlan:
	}
	return nil
}

func (s *sub) notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Subscribe calls fn with every record of the log in order: the persisted ones so
// far, then each new one as it is appended, until ctx is done (it returns nil) or
// the log is closed (it returns nil once everything is delivered). An error from
// fn stops it and is returned. fn runs on the caller's goroutine and never holds
// up Append: a slow subscriber only queues.
func (l *Log) Subscribe(ctx context.Context, fn func(Record) error) error {
	s := &sub{wake: make(chan struct{}, 1)}
	l.mu.Lock()
	s.q = slices.Clone(l.recs)
	l.subs[s] = struct{}{}
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.subs, s)
		l.mu.Unlock()
	}()
	for {
		l.mu.Lock()
		q, closed := s.q, l.closed
		s.q = nil
		l.mu.Unlock()
		for _, r := range q {
			if ctx.Err() != nil {
				return nil
			}
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(q) > 0 {
			continue
		}
		if closed {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.wake:
		}
	}
}

// Close closes the file; subscribers receive what is queued and return.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	for s := range l.subs {
		s.notify()
	}
	return l.f.Close()
}

// syncDir makes a new file's directory entry durable; failure only weakens
// durability of the entry, the log itself is synced, so it is not reported.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
