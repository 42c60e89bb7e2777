package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/checkpoint"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/view"
)

// maxDiffText caps each side of a file's text in a restore record (and its
// card); a longer or binary file shows as a placeholder.
const maxDiffText = 256 << 10

// span is one change of the workspace that can be undone: a prompt's, or a
// restore's. The session's spans, in order, are what /rewind lists.
type span struct {
	prompt        int    // the prompt's number; 0 for a restore
	text          string // the prompt's text
	before, after string // snapshots; "" when none was taken
	note          string // why there is no snapshot
	restore       *session.Restore
}

// undoState is the session's checkpoints, folded from its records.
type undoState struct {
	mu      sync.Mutex
	spans   []span
	prompts int
	off     string // why no more snapshots are taken (one took too long)
	// early is the prompt whose "before" was taken ahead of it, for a
	// command body's !`cmd` (what they change is the prompt's to undo);
	// 0 when none is pending.
	early int
	told  string // the last notice about what snapshots leave out

	once     sync.Once
	store    *checkpoint.Store
	storeErr error
	opened   atomic.Bool // once is done: store or storeErr is set

	chain chain
}

// fold keeps what r says about the workspace's checkpoints.
func (u *undoState) fold(r session.Record) {
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case r.Type == session.TypeCheckpoint && r.Checkpoint.Phase == session.PhaseBefore:
		c := r.Checkpoint
		u.prompts = c.Prompt
		u.spans = append(u.spans, span{prompt: c.Prompt, before: c.Tree, note: c.Note})
	case r.Type == session.TypeCheckpoint:
		// An "after" is logged when it is ready: a restore's records may
		// come between.
		for i := len(u.spans) - 1; i >= 0; i-- {
			sp := &u.spans[i]
			if sp.prompt != r.Checkpoint.Prompt {
				continue
			}
			sp.after = r.Checkpoint.Tree
			if b := r.Checkpoint.Before; b != "" {
				sp.before = b
				if sp.note == pendingNote {
					sp.note = ""
				}
			}
			if sp.note == "" || sp.note == pendingNote {
				sp.note = r.Checkpoint.Note
			}
			break
		}
	case r.Type == session.TypeUser:
		if i := len(u.spans) - 1; i >= 0 && u.spans[i].prompt > 0 && u.spans[i].text == "" && u.spans[i].after == "" {
			u.spans[i].text = r.Text
		}
	case r.Type == session.TypeRestore:
		rs := *r.Restore
		u.spans = append(u.spans, span{before: rs.Before, after: rs.After, restore: &rs})
	}
}

func (u *undoState) list() []span {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]span(nil), u.spans...)
}

// checkpointStore is the workspace's shadow store, opened on first use: one per
// workspace under the session directory, shared by the process's sessions in
// that workspace (their snapshots at the same time are taken as one), with an
// index per process named by the first session that opened it.
func (s *Session) checkpointStore() (*checkpoint.Store, error) {
	u := &s.undo
	u.once.Do(func() {
		key := sha256.Sum256([]byte(s.ws.Root()))
		dir := filepath.Join(s.o.SessionDir, "checkpoints", hex.EncodeToString(key[:8]))
		u.store, u.storeErr = openStore(dir, s.ws.Root(), s.ID(), checkpoint.Options{Exclude: []string{s.o.SessionDir}, Ignore: s.o.CheckpointExclude})
		u.opened.Store(true)
	})
	return u.store, u.storeErr
}

// stores are the process's open checkpoint stores, by directory.
var stores struct {
	sync.Mutex
	m map[string]*storeOpen
}

// storeOpen is one directory's store, opened once by whoever asks first.
type storeOpen struct {
	once sync.Once
	done atomic.Bool // st or err is set
	st   *checkpoint.Store
	err  error
}

// openStore is the process's store dir, opened if it is not yet (or was
// removed since). Sessions that start together in a workspace wait for one
// of them to open it; in other workspaces, they do not wait.
func openStore(dir, root, index string, o checkpoint.Options) (*checkpoint.Store, error) {
	stores.Lock()
	so := stores.m[dir]
	if so != nil && so.done.Load() {
		// Opened: still there?
		if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil {
			so = nil
		}
	}
	if so == nil {
		so = &storeOpen{}
		if stores.m == nil {
			stores.m = map[string]*storeOpen{}
		}
		stores.m[dir] = so
	}
	stores.Unlock()
	so.once.Do(func() {
		so.st, so.err = checkpoint.Open(dir, root, index, o)
		so.done.Store(true)
	})
	if so.err != nil {
		stores.Lock()
		if stores.m[dir] == so {
			delete(stores.m, dir) // tried again by the next session
		}
		stores.Unlock()
	}
	return so.st, so.err
}

// tellLeftOut says, once until it changes, which files snapshots leave out
// because they look like secrets, and which of the repository's ignore rules
// they could not use.
func (s *Session) tellLeftOut(snap checkpoint.Snapshot) {
	var msg []string
	if n := len(snap.Secrets); n > 0 {
		names := strings.Join(snap.Secrets[:min(n, 5)], ", ")
		if n > 5 {
			names += fmt.Sprintf(" and %d more", n-5)
		}
		msg = append(msg, "Checkpoints leave out "+names+": files named like secrets are not copied out of the workspace, "+
			"so undo cannot restore them (checkpoint_exclude in config.toml leaves out more).")
	}
	if snap.Notice != "" {
		msg = append(msg, snap.Notice)
	}
	text := strings.Join(msg, " ")
	s.undo.mu.Lock()
	told := s.undo.told == text
	s.undo.told = text
	s.undo.mu.Unlock()
	if !told && text != "" {
		s.o.Warn(text)
	}
}

// put logs rec, publishes it and folds what the host keeps of it.
func (s *Session) put(rec session.Record) (session.Record, error) {
	out, err := s.bus.put(s.log, rec)
	if err == nil {
		s.undo.fold(out)
	}
	return out, err
}

// undoCommand is /undo [--overwrite]: the last change (a prompt's, or an undo's)
// is reverted.
func (s *Session) undoCommand(ctx context.Context, args string) (Reply, error) {
	overwrite, rest := cutFlag(args, "--overwrite")
	if rest != "" {
		return Reply{Text: "Cannot undo: want /undo [--overwrite]."}, nil
	}
	s.promptEnded(ctx)
	s.settle(ctx)
	n := len(s.undo.list())
	if n == 0 {
		return Reply{Text: "There is nothing to undo yet."}, nil
	}
	return s.Restore(ctx, n, overwrite)
}

// rewindCommand is /rewind [N [code|conversation|both] [--overwrite]]:
// without N, the list of changes; with N, the workspace goes back to what it
// was before change N (code, the default), the conversation is forked before
// it (conversation), or both.
func (s *Session) rewindCommand(ctx context.Context, args string) (Reply, error) {
	overwrite, rest := cutFlag(args, "--overwrite")
	if rest == "" {
		points, err := s.Points(ctx)
		if err != nil {
			return Reply{}, err
		}
		return Reply{Text: PointsText(points), Points: points}, nil
	}
	num, what, _ := strings.Cut(rest, " ")
	n, err := strconv.Atoi(num)
	if what == "" {
		what = "code"
	}
	if err != nil || what != "code" && what != "conversation" && what != "both" {
		return Reply{Text: "Cannot rewind: want /rewind [N [code|conversation|both]] [--overwrite]."}, nil
	}
	if what == "conversation" {
		return s.forkCommand(n)
	}
	return s.restore(ctx, n, overwrite, what == "both")
}

// forkCommand forks the conversation before change n, a prompt, leaving the
// files as they are.
func (s *Session) forkCommand(n int) (Reply, error) {
	s.promptEnded(context.Background())
	s.settle(context.Background())
	spans := s.undo.list()
	if n < 1 || n > len(spans) || spans[n-1].prompt == 0 {
		return Reply{Text: fmt.Sprintf("Cannot rewind the conversation: change %d is not a prompt (/rewind lists them).", n)}, nil
	}
	id, err := s.fork(spans[n-1].prompt)
	if err != nil {
		return Reply{}, err
	}
	return Reply{Text: forkText(id, spans[n-1].prompt), Fork: id}, nil
}

// fork starts a new session whose log is this one's up to prompt's checkpoint;
// this one stays as it is, in the session list.
func (s *Session) fork(prompt int) (string, error) {
	id := session.NewID(s.o.Now())
	err := session.Fork(s.Path(), filepath.Dir(s.Path()), id, func(r session.Record) bool {
		return r.Type == session.TypeCheckpoint && r.Checkpoint.Phase == session.PhaseBefore && r.Checkpoint.Prompt == prompt
	}, func(r session.Record) bool {
		// An earlier prompt's "after", logged once its snapshot was taken.
		return r.Type == session.TypeCheckpoint && r.Checkpoint.Phase == session.PhaseAfter && r.Checkpoint.Prompt < prompt
	})
	return id, err
}

func forkText(id string, prompt int) string {
	return fmt.Sprintf("The conversation before prompt %d goes on in the new session %s (/resume %s); this one stays in the list.", prompt, id, id)
}

func cutFlag(args, flag string) (bool, string) {
	f := strings.Fields(args)
	found := false
	var rest []string
	for _, a := range f {
		if a == flag {
			found = true
		} else {
			rest = append(rest, a)
		}
	}
	return found, strings.Join(rest, " ")
}

// Point is one change /rewind can go back before.
type Point struct {
	N      int    // from 1, in the order of the session
	Prompt int    // the prompt's number; 0 for an undo
	Text   string // the prompt's text, or what the undo undid
	Files  []checkpoint.Change
	Note   string // why it cannot be undone, if it cannot
}

// Points lists the session's changes with the files each changed.
func (s *Session) Points(ctx context.Context) ([]Point, error) {
	s.settle(ctx)
	spans := s.undo.list()
	points := make([]Point, len(spans))
	st, stErr := s.checkpointStore()
	for i, sp := range spans {
		p := Point{N: i + 1, Prompt: sp.prompt, Text: sp.text, Note: sp.note}
		if sp.restore != nil {
			p.Text = fmt.Sprintf("/undo back to before change %d", sp.restore.To)
		}
		after := sp.after
		if after == "" && i+1 < len(spans) {
			after = spans[i+1].before
		}
		switch {
		case stErr != nil:
			p.Note = stErr.Error()
		case sp.before != "" && after != "":
			cs, err := st.Changes(ctx, sp.before, after)
			if err != nil {
				return nil, err
			}
			p.Files = cs
		case p.Note == "" && sp.before == "":
			p.Note = "no snapshot was taken"
		}
		points[i] = p
	}
	return points, nil
}

// PointsText is /rewind's list.
func PointsText(points []Point) string {
	if len(points) == 0 {
		return "There is nothing to rewind yet."
	}
	var b strings.Builder
	b.WriteString("Changes (/rewind N puts the files back as they were before change N):")
	for _, p := range points {
		text, _, _ := strings.Cut(p.Text, "\n")
		if r := []rune(text); len(r) > 60 {
			text = string(r[:59]) + "…"
		}
		fmt.Fprintf(&b, "\n%3d. %s", p.N, text)
		switch {
		case p.Note != "":
			fmt.Fprintf(&b, " — %s", p.Note)
		case len(p.Files) == 0:
			b.WriteString(" — no files changed")
		default:
			b.WriteString(" — " + FilesText(p.Files))
		}
	}
	return b.String()
}

// FilesText is a change's files with their line counts.
func FilesText(cs []checkpoint.Change) string {
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		if c.Added < 0 {
			parts = append(parts, c.Path+" (binary)")
		} else {
			parts = append(parts, fmt.Sprintf("%s +%d −%d", c.Path, c.Added, c.Removed))
		}
	}
	return strings.Join(parts, ", ")
}

// Restore puts the workspace back as it was before change n (from 1; the last
// one is what /undo reverts). It shows the diff it will apply as a permission
// request and writes nothing unless it is allowed. Files the user changed after
// the agent last did are kept unless overwrite is set. The restore is logged
// with its own snapshots, so it can be undone in turn.
func (s *Session) Restore(ctx context.Context, n int, overwrite bool) (Reply, error) {
	return s.restore(ctx, n, overwrite, false)
}

// restore is Restore that also forks the conversation before change n, a
// prompt, when fork is set.
func (s *Session) restore(ctx context.Context, n int, overwrite, fork bool) (Reply, error) {
	s.promptEnded(ctx)
	s.settle(ctx)
	spans := s.undo.list()
	if fork && n >= 1 && n <= len(spans) && spans[n-1].prompt == 0 {
		return Reply{Text: fmt.Sprintf("Cannot rewind the conversation: change %d is not a prompt (/rewind lists them).", n)}, nil
	}
	if n < 1 || n > len(spans) {
		return Reply{Text: fmt.Sprintf("Cannot rewind: there is no change %d (/rewind lists them).", n)}, nil
	}
	tctx, done, err := s.beginTurn(ctx)
	if errors.Is(err, ErrBusy) {
		return Reply{Text: "A turn is running: wait for it, or cancel it, before undoing."}, nil
	}
	if err != nil {
		return Reply{}, err
	}
	defer done()
	st, err := s.checkpointStore()
	if err != nil {
		return Reply{Text: "Cannot undo: " + err.Error() + "."}, nil
	}
	now, err := st.Snapshot(tctx)
	if err != nil {
		return Reply{Text: "Cannot undo: " + err.Error() + "."}, nil
	}
	var cs []checkpoint.Span
	for i := n - 1; i < len(spans); i++ {
		sp := spans[i]
		after := sp.after
		switch {
		case after == "" && i+1 < len(spans):
			after = spans[i+1].before
		case after == "":
			after = now.Tree // a turn that did not end: what it left is what there is
		}
		if sp.before == "" || after == "" {
			return Reply{Text: fmt.Sprintf("Cannot undo change %d: %s.", i+1, orDefault(sp.note, "no snapshot was taken"))}, nil
		}
		cs = append(cs, checkpoint.Span{Before: sp.before, After: after})
	}
	plan, err := st.Plan(tctx, now.Tree, cs)
	if err != nil {
		return Reply{}, err
	}
	s.editorHolds(tctx, &plan)
	rs := session.Restore{To: n, Prompt: spans[n-1].prompt, Before: now.Tree}
	for _, f := range plan.Files {
		if f.User && !overwrite {
			rs.Kept = append(rs.Kept, f.Path)
			continue
		}
		rf := session.RestoredFile{Path: f.Path, Added: f.Added, Removed: f.Removed}
		if f.Now.ID != "" {
			rf.OldText = diffText(f.Old)
		}
		if f.Want.ID != "" {
			rf.NewText = diffText(f.New)
		}
		rs.Files = append(rs.Files, rf)
	}
	if len(rs.Files) == 0 {
		text := "There is nothing to undo: the files are as they were before."
		if len(rs.Kept) > 0 {
			text = fmt.Sprintf("Nothing was undone: you changed %s since; /undo --overwrite puts them back too.", strings.Join(rs.Kept, ", "))
		}
		return Reply{Text: text}, nil
	}
	if ok, err := s.approveRestore(tctx, rs); err != nil || !ok {
		if err != nil && !errors.Is(err, context.Canceled) {
			return Reply{}, err
		}
		return Reply{Text: "Undo cancelled: nothing was changed."}, nil
	}
	if err := s.applyRestore(tctx, st, plan, overwrite); err != nil {
		return Reply{}, err
	}
	after, err := st.Snapshot(s.ctx)
	if err != nil {
		s.o.Warn(fmt.Sprintf("the snapshot after the undo: %v", err))
	} else {
		s.rebase(after)
	}
	rs.After = after.Tree
	if fork {
		// The fork is cut before the restore is logged: it starts clean.
		if rs.Fork, err = s.fork(rs.Prompt); err != nil {
			return Reply{}, err
		}
	}
	if _, err := s.put(session.Record{Type: session.TypeRestore, Restore: &rs}); err != nil {
		return Reply{}, err
	}
	var r Reply
	if len(rs.Kept) > 0 {
		them := "it"
		if len(rs.Kept) > 1 {
			them = "them"
		}
		r.Text = fmt.Sprintf("Kept %s: you changed %s after the agent did; /rewind %d --overwrite puts %s back too.",
			strings.Join(rs.Kept, ", "), them, n, them)
	}
	if fork {
		r.Text = strings.TrimSpace(r.Text + " " + forkText(rs.Fork, rs.Prompt))
		r.Fork = rs.Fork
	}
	return r, nil
}

// approveRestore asks the user about the restore, shown as the diff it applies,
// on the path tool calls take. Without anyone to ask it is refused.
func (s *Session) approveRestore(ctx context.Context, rs session.Restore) (bool, error) {
	if !s.o.Ask {
		return false, nil
	}
	call, _ := view.RestoreCards(rs, false)
	d, err := s.askPermission(ctx, &Permission{Unlogged: true, Request: agent.PermissionRequest{
		CallID: fmt.Sprintf("dsh-undo-%d", len(s.undo.list())+1), Tool: "undo", Card: call,
		Approval: tool.Approval{Label: "this undo", Remember: false},
	}})
	return err == nil && d != agent.Reject, err
}

func diffText(b []byte) *string {
	t := string(b)
	if len(b) > maxDiffText || !utf8.Valid(b) {
		t = fmt.Sprintf("(%d bytes, not shown)", len(b))
	}
	return &t
}
