package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/jsonfast"
)

// DefaultProgressCap is how many bytes of progress output one call persists.
const DefaultProgressCap = 256 << 10

// Options tune a Log. The zero value is ready to use.
type Options struct {
	Now func() time.Time // stamps records without a time; default time.Now
	// ProgressCap is the number of progress bytes persisted per call: 0 means
	// DefaultProgressCap, a negative value persists none. Live subscribers see all.
	ProgressCap int
	// System is the session's system prompt, which Create records in the header.
	System string
	// Parent links a child session (a subagent's) to its parent's call, in
	// the header.
	Parent *Parent
	// Scratch is a log that goes with its process (dsh tool's, in a directory
	// removed at exit): nothing is synced, since nothing is kept.
	Scratch bool
	// DiscardEmpty removes, on Close, a log Create started that holds nothing
	// but its header: a session opened and left without a word leaves nothing.
	DiscardEmpty bool
	// Meta, if set, decodes each tool result's meta as Open reads it (the
	// session's tool registry): each record is then decoded once.
	Meta MetaReader
}

// MetaReader reads, at d's position, the meta of a logged result of the tool
// called name, decoding it for later use in the same pass; ok is false, d
// where it was, when it does not (the meta is then read as raw JSON).
type MetaReader interface {
	ReadMeta(name string, d *jsonfast.Reader) (raw jsontext.Value, ok bool)
}

// Log is an open session log, the append-only writer. It keeps no records in
// memory (a session's history is read back from the file), so a long session costs
// what its open calls cost. Its methods are safe for concurrent use.
type Log struct {
	path    string
	now     func() time.Time
	cap     int
	scratch bool
	discard bool // Options.DiscardEmpty, for a log Create started

	mu       sync.Mutex
	records  int // the records written by this Log
	f        *os.File
	size     int64          // bytes of complete lines, to undo a failed write
	header   Record         // the first record; the others are only on disk
	progress map[string]int // persisted progress bytes of calls without a result; -1 once over the cap
	closed   bool
	broken   error // a write that could not be undone: the log takes no more

	syncing bool           // a background sync is due: later writes share it
	syncErr error          // what a background sync failed with, for the next Put
	syncers sync.WaitGroup // the background syncs, which Close waits for
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
	l.discard = o.DiscardEmpty
	h := Record{Type: TypeHeader, Version: FormatVersion, SessionID: id, Cwd: cwd, System: o.System, Parent: o.Parent}
	if _, err := l.Put(h); err != nil {
		return nil, err
	}
	if !o.Scratch {
		syncDir(dir)
	}
	return l, nil
}

// Open reopens an existing log for appending, calling each (if not nil) with every
// record in order as it reads them — a reload folds a session's history in the
// same pass that checks the file, and holds none of it. A torn last line is
// truncated away; a corrupt line elsewhere, an error from each, or a newer format
// ([*FormatError]) is refused.
func Open(path string, o Options, each func(Record) error) (_ *Log, err error) {
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
	l := newLog(path, f, o)
	n := 0
	d := &decoder{name: path, meta: o.Meta}
	off, err := d.scan(f, func(r Record) error {
		if n == 0 {
			l.header = r
		}
		n++
		l.account(r)
		if each != nil {
			return each(r)
		}
		return nil
	})
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
	l.size = off
	return l, nil
}

func newLog(path string, f *os.File, o Options) *Log {
	now, c := o.normalize()
	return &Log{path: path, now: now, cap: c, scratch: o.Scratch, f: f, progress: map[string]int{}}
}

// ID returns the session id recorded in the header.
func (l *Log) ID() string { return l.Header().SessionID }

// Path returns the log file's path.
func (l *Log) Path() string { return l.path }

// Header returns the header record.
func (l *Log) Header() Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.header
}

// Append writes r as one line with a single write. A zero r.Time is stamped from
// Options.Now. The file is synced after the header and turn ends before Append
// returns, and after a tool result within moments, in the background (a command
// does not wait for the disk; a failed sync is the error of the next Append,
// which is written all the same).
// Progress beyond the per-call cap is not persisted. Only Create writes a header.
func (l *Log) Append(r Record) error {
	_, err := l.Put(r)
	return err
}

// Put is Append that also returns the record as a reader of the file will see it
// (times in UTC, JSON as written), which is what a live stream must hand out so
// that live and replay are the same. A progress record past its call's cap is
// returned but not written.
func (l *Log) Put(r Record) (Record, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return Record{}, errors.New("session log is closed")
	case l.broken != nil:
		return Record{}, l.broken
	case r.Type == TypeHeader && l.header.Type == TypeHeader:
		return Record{}, errors.New("session log already has a header")
	}
	if r.Time.IsZero() {
		r.Time = l.now()
	}
	if err := validate(&r); err != nil {
		return Record{}, fmt.Errorf("session log: %w", err)
	}
	line, rec, err := encode(r)
	if err != nil {
		return Record{}, fmt.Errorf("session log: %w", err)
	}
	if l.account(rec) {
		if err := l.write(line, r.Type); err != nil {
			return Record{}, err
		}
		if r.Type == TypeHeader {
			l.header = rec
		}
	}
	if err := l.syncErr; err != nil {
		// An earlier record may not be on disk: said once, like a sync in
		// place, after this one is written as it would have been.
		l.syncErr = nil
		return rec, fmt.Errorf("session log %s: sync: %w", l.path, err)
	}
	return rec, nil
}

// account notes r in the progress accounting and says whether it is persisted:
// everything is, but progress past its call's cap.
func (l *Log) account(r Record) bool {
	if r.Type == TypeProgress {
		return l.countProgress(r)
	}
	if r.Type == TypeToolResult {
		delete(l.progress, r.CallID)
	}
	return true
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
	l.records++
	if l.scratch {
		return nil
	}
	if t == TypeToolResult {
		l.syncSoon()
		return nil
	}
	if t == TypeHeader || t == TypeTurnEnd {
		if err := l.f.Sync(); err != nil {
			return fmt.Errorf("session log %s: sync: %w", l.path, err)
		}
	}
	return nil
}

// syncSoon syncs the file in the background; the results of a burst of calls
// share one sync. Called with mu held.
func (l *Log) syncSoon() {
	if l.syncing {
		return
	}
	l.syncing = true
	l.syncers.Add(1)
	go func() {
		defer l.syncers.Done()
		l.mu.Lock()
		l.syncing = false // what is written from here on needs a sync of its own
		l.mu.Unlock()
		if err := l.f.Sync(); err != nil {
			l.mu.Lock()
			if l.syncErr == nil {
				l.syncErr = err
			}
			l.mu.Unlock()
		}
	}()
}

// Close waits for the syncs due and closes the file; a sync that failed is its
// error.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	l.syncers.Wait() // the syncs due, before their file is closed
	l.mu.Lock()
	err := l.syncErr
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	if err == nil && l.discard && l.records == 1 {
		err = os.Remove(l.path)
	}
	if err != nil {
		return fmt.Errorf("session log %s: %w", l.path, err)
	}
	return nil
}

// syncDir makes a new file's directory entry durable; failure only weakens
// durability of the entry, the log itself is synced, so it is not reported.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// Size is how many bytes of complete records the file holds: what a reader
// that stops there has read of the records put so far.
func (l *Log) Size() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.size
}
