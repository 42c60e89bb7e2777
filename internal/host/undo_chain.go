package host

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsh-dev/dsh/internal/checkpoint"
	"github.com/dsh-dev/dsh/internal/session"
)

// The session's snapshots are a chain: each prompt's "after" is the next
// one's "before", and a prompt pays at most one walk of the tree, only when
// something dsh cannot account for ran in it (a command, a job, a hook, a
// tool it cannot see into). A prompt whose files only the file tools changed
// derives its "after" from its "before" and the paths they named; one that
// changed nothing takes none. The snapshots are taken in the background: the
// first, at open, is waited for only before something unaccounted runs; a
// prompt's "after" is logged when it is ready, and waited for only before
// something unaccounted runs in the next prompt, and by undo, rewind and
// diff.
//
// The files a file tool changes are read as they are before it first
// changes them in a prompt, and laid over the prompt's "before": what the
// user changed in them between prompts, or while the first snapshot was
// still being taken, is not the prompt's to undo.

// pendingNote is a before record's note while its snapshot is being taken;
// the prompt's after record names it.
const pendingNote = session.CheckpointPending

// snapJob is one snapshot of the chain, taken or being taken.
type snapJob struct {
	done   chan struct{} // snap and err are set
	logged chan struct{} // and what it is for is logged
	snap   checkpoint.Snapshot
	err    error
	// spare says no prompt's "after" is this snapshot (it is a walk at
	// open, or after work between prompts): a file tool need not wait for
	// it, its first touches are laid over it.
	spare bool
	// stop ends a spare walk no prompt has claimed as its "before" (at
	// Close); claimed is set under the chain's lock.
	stop    context.CancelFunc
	claimed bool
	// urgent lets a spare walk skip the line: someone waits for it.
	urgent chan struct{}
	hurry  sync.Once
	// after is the snapshot a prompt's "after" is taken after, its
	// "before", until that is taken (no chain of them is kept).
	after atomic.Pointer[snapJob]
	// early are, for a spare walk, the files the file tools of any prompt
	// changed before it was taken, as they were at first (under the chain's
	// lock): a walk that waits in line past prompts sees their changes, which
	// are laid back out of it.
	early map[string]checkpoint.State
}

// rush has j, and what it is taken after, taken now if it waits in line.
func (j *snapJob) rush() {
	for ; j != nil; j = j.after.Load() {
		if j.urgent != nil {
			j.hurry.Do(func() { close(j.urgent) })
		}
	}
}

func (j *snapJob) ready() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

// chain is the session's snapshots as it takes them.
type chain struct {
	mu sync.Mutex
	// base is the newest snapshot, taken or being taken: the workspace as
	// dsh last knew it.
	base *snapJob
	// dirty says something dsh cannot account for may have changed files
	// since base began: the next prompt's "before" walks.
	dirty bool
	// The open prompt's: open while it runs; walk, something unaccounted
	// ran in it; pre, the files its file tools changed as they were at
	// first (nil: not readable); start, its "before".
	open    bool
	walk    bool
	pre     map[string]*checkpoint.State
	start   *snapJob
	since   time.Time     // when the open prompt began, less the file clock's lag (userEdits)
	ended   chan struct{} // closed when the open prompt's span ends
	named   string        // the tree the open prompt's before record named
	pending int           // "after"s being taken
	jobs    sync.WaitGroup
	closing bool   // Close waits for jobs: none starts in the background
	root    string // the workspace root, links resolved
}

// spareWalks bounds the spare walks the process takes at once: many sessions
// opened together (an editor's threads, each in its own workspace) take
// theirs one after another, behind the sessions' own work, not all at once.
var spareWalks = make(chan struct{}, max(1, runtime.NumCPU()/2))

// turns counts the process's running turns: a spare walk starts when none
// runs (or when someone waits for it), so sessions at work do not share the
// CPU with walks nobody waits for.
var turns struct {
	sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0
}

// turnStarted and turnEnded count a turn of any session of the process.
func turnStarted() {
	turns.Lock()
	if turns.n == 0 {
		turns.idle = make(chan struct{})
	}
	turns.n++
	turns.Unlock()
}

func turnEnded() {
	turns.Lock()
	if turns.n--; turns.n == 0 {
		close(turns.idle)
	}
	turns.Unlock()
}

// lineUp waits for spare walk j's turn: a slot free while no turn runs in
// the process, or someone waiting for it (it goes at once, held false). Its
// place in line may come long after the process was quiet: walks queued at
// one pause of the sessions' turns start one by one, each only while none
// runs.
func lineUp(ctx context.Context, j *snapJob) (held bool, err error) {
	for {
		quiet(ctx, j)
		select {
		case spareWalks <- struct{}{}:
		case <-j.urgent:
			return false, nil
		case <-ctx.Done():
			return false, fmt.Errorf("checkpoint: %w", ctx.Err())
		}
		if !busy() || hurried(j) {
			return true, nil
		}
		<-spareWalks
	}
}

// busy says a turn runs in the process.
func busy() bool {
	turns.Lock()
	defer turns.Unlock()
	return turns.n > 0
}

// hurried says someone waits for j.
func hurried(j *snapJob) bool {
	select {
	case <-j.urgent:
		return true
	default:
		return false
	}
}

// quiet returns once no turn runs in the process, j is rushed, or ctx ends.
func quiet(ctx context.Context, j *snapJob) {
	turns.Lock()
	n, idle := turns.n, turns.idle
	turns.Unlock()
	if n == 0 {
		return
	}
	select {
	case <-idle:
	case <-j.urgent:
	case <-ctx.Done():
	}
}

// startCheckpoints takes the first snapshot in the background, at open: the
// store is opened (made, the first time in a workspace) there too.
func (s *Session) startCheckpoints() {
	if s.o.sub != nil || s.o.Provider == nil {
		return // no prompt here takes checkpoints
	}
	ch := &s.undo.chain
	ch.mu.Lock()
	if ch.base == nil { // a prompt that came before a late GoLive began its own
		ch.base = s.walkJob()
	}
	ch.mu.Unlock()
}

// walkJob starts a spare walk of the tree; it stops at Close unless a
// prompt waits for it. The chain's lock is held.
func (s *Session) walkJob() *snapJob {
	ch := &s.undo.chain
	ctx, stop := context.WithCancel(context.Background())
	j := &snapJob{done: make(chan struct{}), logged: make(chan struct{}), spare: true, stop: stop, urgent: make(chan struct{})}
	close(j.logged)
	if ch.closing {
		stop()
		j.err = ErrClosed
		close(j.done)
		return j
	}
	ch.jobs.Go(func() {
		defer stop()
		held, err := lineUp(ctx, j)
		if err != nil {
			j.err = err
			close(j.done)
			return
		}
		if held {
			defer func() { <-spareWalks }()
		}
		st, err := s.checkpointStore()
		if err != nil {
			j.err = err
			close(j.done)
			return
		}
		j.snap, j.err = st.Snapshot(ctx)
		close(j.done)
		if j.err == nil {
			s.tellLeftOut(j.snap)
		}
		s.noteTimeout(j.err)
	})
	return j
}

// storeFailed is why the checkpoint store could not be opened, once it is
// known; it does not wait for the store being opened.
func (s *Session) storeFailed() error {
	u := &s.undo
	if !u.opened.Load() {
		return nil
	}
	return u.storeErr
}

// noteTimeout turns snapshots off for the session after one took too long.
func (s *Session) noteTimeout(err error) {
	if !errors.Is(err, checkpoint.ErrTimeout) {
		return
	}
	s.undo.mu.Lock()
	told := s.undo.off != ""
	s.undo.off = err.Error()
	s.undo.mu.Unlock()
	if !told {
		s.o.Warn(err.Error() + "; no more checkpoints are taken in this session")
	}
}

// beginCheckpoint logs the next prompt's "before" and returns that prompt's
// number: the newest snapshot, or a walk when something unaccounted ran since.
// It does not wait for the snapshot: a before still being taken is named by
// the prompt's after record.
func (s *Session) beginCheckpoint(context.Context) int {
	s.undo.mu.Lock()
	n := s.undo.prompts + 1
	off := s.undo.off
	s.undo.mu.Unlock()
	c := &session.Checkpoint{Prompt: n, Phase: session.PhaseBefore}
	ch := &s.undo.chain
	if off != "" {
		c.Note = off
	} else if err := s.storeFailed(); err != nil {
		c.Note = err.Error()
	} else {
		ch.mu.Lock()
		if ch.base == nil || ch.dirty {
			ch.base, ch.dirty = s.walkJob(), false
		}
		ch.open, ch.walk, ch.pre, ch.start = true, false, map[string]*checkpoint.State{}, ch.base
		ch.ended = make(chan struct{})
		ch.since = time.Now().Add(-fileClockLag)
		start := ch.start
		start.claimed = true
		switch {
		case !start.ready():
			c.Note = pendingNote
		case start.err != nil:
			c.Note = start.err.Error()
		default:
			c.Tree, c.Skipped = start.snap.Tree, append(slices.Clone(start.snap.Skipped), start.snap.Secrets...)
		}
		ch.named = c.Tree
		ch.mu.Unlock()
	}
	if _, err := s.put(session.Record{Type: session.TypeCheckpoint, Checkpoint: c}); err != nil {
		s.o.Warn(fmt.Sprintf("logging a checkpoint: %v", err))
	}
	return n
}

// effect is told, before a call or a hook runs, what it may change: paths
// (absolute, links resolved) a file tool names, or anything (all). Before
// anything, it waits for the snapshots being taken, which read the files;
// before a file tool, it reads the files it names as they are, the first
// time in a prompt.
func (s *Session) effect(ctx context.Context, paths []string, all bool) {
	ch := &s.undo.chain
	var rels []string
	if !all {
		for _, p := range paths {
			rel, ok := ch.rel(s.ws.Root(), p)
			if !ok {
				all = true // a link on the way: git would not follow it
				break
			}
			if rel != "" {
				rels = append(rels, rel)
			}
		}
	}
	ch.mu.Lock()
	base := ch.base
	if !ch.open {
		// Between prompts (dsh tool, a hook at start or end): the next
		// prompt's "before" walks.
		ch.dirty = true
		ch.mu.Unlock()
		return
	}
	if all {
		ch.walk = true
		ch.mu.Unlock()
		if base != nil {
			waitJob(ctx, base) // the "before" is what there was before it ran
		}
		return
	}
	var fresh []string
	for _, r := range rels {
		if _, ok := ch.pre[r]; !ok {
			fresh = append(fresh, r)
		}
	}
	ch.mu.Unlock()
	if len(fresh) == 0 || base == nil {
		return
	}
	states := make(map[string]*checkpoint.State, len(fresh))
	for _, r := range fresh {
		if state, ok := checkpoint.ReadState(s.ws.Root(), r, checkpoint.DefaultMaxFile); ok {
			states[r] = &state
		} else {
			states[r] = nil
		}
	}
	ch.mu.Lock()
	if ch.open {
		for r, state := range states {
			if _, ok := ch.pre[r]; !ok {
				ch.pre[r] = state
			}
		}
	}
	for j := base; j != nil; j = j.after.Load() {
		if !j.spare || j.ready() {
			continue
		}
		for r, state := range states {
			if _, ok := j.early[r]; !ok && state != nil {
				if j.early == nil {
					j.early = map[string]checkpoint.State{}
				}
				j.early[r] = *state
			}
		}
	}
	ch.mu.Unlock()
}

// rel is the slash path of abs inside the workspace root: "" outside it
// (snapshots hold only the root), ok false when a link on the way would
// make git see another file.
func (ch *chain) rel(root, abs string) (string, bool) {
	ch.mu.Lock()
	if ch.root == "" {
		ch.root = root
		if r, err := filepath.EvalSymlinks(root); err == nil {
			ch.root = r
		}
	}
	real := ch.root
	ch.mu.Unlock()
	rel, err := filepath.Rel(real, abs)
	if err != nil || !filepath.IsLocal(rel) {
		return "", true
	}
	dir := filepath.Dir(abs)
	if d, err := filepath.EvalSymlinks(dir); err == nil && d != dir {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

func waitJob(ctx context.Context, j *snapJob) {
	j.rush()
	select {
	case <-j.done:
	case <-ctx.Done():
	}
}

// endCheckpoint ends prompt n's span. After something unaccounted ran, its
// "after" is a walk, taken now; else it is its "before" with the files the
// file tools changed laid over it, read now and stored. Either is logged in
// the background.
func (s *Session) endCheckpoint(n int) {
	ch := &s.undo.chain
	ch.mu.Lock()
	if !ch.open {
		ch.mu.Unlock()
		s.undo.mu.Lock()
		note := s.undo.off
		s.undo.mu.Unlock()
		s.logAfter(&session.Checkpoint{Prompt: n, Phase: session.PhaseAfter, Note: cmp.Or(note, "no snapshot was taken")})
		return
	}
	running := s.tools.Running() // a job still running changes files after it
	start, walk, pre, named, since := ch.start, ch.walk || running, ch.pre, ch.named, ch.since
	ch.pre = map[string]*checkpoint.State{} // read below without the lock
	ch.mu.Unlock()
	before := map[string]checkpoint.State{}
	for p, state := range pre {
		if state != nil {
			before[p] = *state
		}
	}
	after := map[string]checkpoint.State{}
	for p := range pre {
		state, ok := checkpoint.ReadState(s.ws.Root(), p, checkpoint.DefaultMaxFile)
		if !ok {
			walk = true // what a walk would leave out (too big, not a file)
			break
		}
		after[p] = state
	}
	j := &snapJob{done: make(chan struct{}), logged: make(chan struct{})}
	j.after.Store(start)
	ch.mu.Lock()
	// The span ends once its "after" is the newest job: an undo waiting on
	// it then settles on this prompt's records, not the one before.
	ch.open = false
	close(ch.ended)
	ch.base, ch.dirty = j, running
	ch.pending++
	crowded := ch.pending > 2
	ch.mu.Unlock()
	finish := func() {
		ch.mu.Lock()
		ch.pending--
		ch.mu.Unlock()
		close(j.logged)
	}
	var job func()
	if walk {
		// Taken before the prompt is done: what the user changes after it
		// is not the prompt's. What it is logged with is found after.
		start.rush()
		<-start.done
		j.after.Store(nil)
		st, err := s.checkpointStore()
		if j.err = err; err == nil {
			j.snap, j.err = st.Snapshot(context.Background())
		}
		close(j.done)
		if j.err == nil {
			s.tellLeftOut(j.snap)
		}
		job = func() {
			defer finish()
			if j.err == nil && start.err == nil {
				s.userEdits(st, start.snap.Tree, j.snap.Tree, since, before)
			}
			s.logTaken(st, n, start, j, before, nil, named)
		}
	} else {
		job = func() {
			defer finish()
			<-start.done
			j.after.Store(nil)
			st, err := s.checkpointStore()
			j.err = cmp.Or(start.err, err)
			s.logTaken(st, n, start, j, before, after, named)
		}
	}
	ch.mu.Lock()
	closing := ch.closing
	if !closing {
		ch.jobs.Go(job)
	}
	ch.mu.Unlock()
	switch {
	case closing:
		job()
	case crowded:
		// Prompts faster than their snapshots: at most two wait in line,
		// and the walk they wait for does not wait for this turn to end.
		start.rush()
		<-start.logged
	}
}

// fileClockLag is how far a file's modification time may lag the clock:
// the kernel stamps files with a coarse clock, a tick or so behind.
const fileClockLag = 50 * time.Millisecond

// userEdits adds to before the files that changed between a walked prompt's
// "before" (the previous prompt's "after") and its "after" but were last
// modified before the prompt began: the user's edits between prompts, which
// are not the prompt's to undo. A file the prompt's command also changed is
// its, and one the user deleted between prompts cannot be told apart (an
// undo brings it back: nothing is lost).
func (s *Session) userEdits(st *checkpoint.Store, from, to string, since time.Time, before map[string]checkpoint.State) {
	if from == "" || from == to {
		return
	}
	changed, err := st.ChangedPaths(context.Background(), from, to)
	if err != nil {
		return // the prompt's "before" stays the previous "after": as before this check
	}
	for _, p := range changed {
		if _, ok := before[p]; ok {
			continue // a file tool read it before it changed it
		}
		fi, err := os.Lstat(filepath.Join(s.ws.Root(), filepath.FromSlash(p)))
		if err != nil || !fi.ModTime().Before(since) {
			continue
		}
		if state, ok := checkpoint.ReadState(s.ws.Root(), p, checkpoint.DefaultMaxFile); ok {
			before[p] = state
		}
	}
}

// logTaken logs prompt n's "after": j's snapshot, or, when it is not taken
// (after nil), its "before" (start) with after laid over it. Its "before" is
// start's with before laid over it, and logged with it when it is not the
// tree its before record named.
func (s *Session) logTaken(st *checkpoint.Store, n int, start, j *snapJob, before, after map[string]checkpoint.State, named string) {
	c := &session.Checkpoint{Prompt: n, Phase: session.PhaseAfter}
	ch := &s.undo.chain
	ch.mu.Lock()
	for p, state := range start.early { // what the walk saw of later prompts
		before[p] = state
	}
	ch.mu.Unlock()
	s.noteTimeout(j.err)
	if start.err != nil || j.err != nil {
		if after != nil {
			close(j.done)
		}
		c.Note = cmp.Or(j.err, start.err).Error()
		s.logAfter(c)
		return
	}
	b, a, err := st.Lay(context.Background(), start.snap.Tree, before, after)
	if after != nil {
		j.snap = start.snap
		j.snap.Tree, j.err = a, err
		close(j.done)
	}
	if err != nil {
		c.Note = err.Error()
		s.logAfter(c)
		return
	}
	c.Tree, c.Skipped = j.snap.Tree, append(slices.Clone(j.snap.Skipped), j.snap.Secrets...)
	if b != named {
		c.Before = b
	}
	s.logAfter(c)
}

func (s *Session) logAfter(c *session.Checkpoint) {
	if _, err := s.put(session.Record{Type: session.TypeCheckpoint, Checkpoint: c}); err != nil && !s.isClosed() {
		s.o.Warn(fmt.Sprintf("logging a checkpoint: %v", err))
	}
}

// endCheckpoints stops the walk no prompt waits for and, unless now (the
// exit path), waits for the prompts' "after"s to be logged.
func (s *Session) endCheckpoints(now bool) {
	ch := &s.undo.chain
	ch.mu.Lock()
	ch.closing = true
	if j := ch.base; j != nil && j.stop != nil && !j.claimed {
		j.stop()
	}
	if j := ch.start; j != nil {
		j.rush() // a prompt's "after" waits for it: the session ends once it is taken
	}
	ch.mu.Unlock()
	if !now {
		ch.jobs.Wait()
	}
}

// promptEnded waits for the open prompt's span to end: its turn_end record
// is logged before its "after" is begun, and an undo sent on seeing it must
// undo that prompt, not the one before.
func (s *Session) promptEnded(ctx context.Context) {
	ch := &s.undo.chain
	ch.mu.Lock()
	open, ended := ch.open, ch.ended
	ch.mu.Unlock()
	if !open {
		return
	}
	select {
	case <-ended:
	case <-ctx.Done():
	}
}

// settle waits for the snapshots being taken and their records: what undo,
// rewind and diff read is logged.
func (s *Session) settle(ctx context.Context) {
	ch := &s.undo.chain
	ch.mu.Lock()
	j, start := ch.base, ch.start
	ch.mu.Unlock()
	if j == nil {
		return
	}
	if start != nil {
		start.rush()
	}
	select {
	case <-j.logged:
	case <-ctx.Done():
	}
}

// rebase makes snap the newest snapshot: the workspace as a restore left it.
func (s *Session) rebase(snap checkpoint.Snapshot) {
	j := &snapJob{done: make(chan struct{}), logged: make(chan struct{}), snap: snap, spare: true}
	close(j.done)
	close(j.logged)
	ch := &s.undo.chain
	ch.mu.Lock()
	ch.base, ch.dirty = j, false
	ch.mu.Unlock()
}
