// Package checkpoint snapshots a workspace into a shadow git object store kept
// outside it, so that what a prompt changed — by the file tools or by shell
// commands — can be put back. The user's own .git is never read or written:
// git runs with GIT_DIR pointing at the shadow store and GIT_WORK_TREE at the
// workspace, so the workspace's .gitignore files (and the repository's
// info/exclude, copied in) keep build output and the like out of it. Files
// whose names say they hold secrets (.env, *.pem, id_rsa) are left out too,
// and said so: a snapshot is a copy outside the repository.
package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dsh-dev/dsh/internal/workspace"
)

// EmptyTree is git's tree with nothing in it: the state before a file existed.
const EmptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// Defaults bound a snapshot.
const (
	DefaultMaxFile = 16 << 20 // bytes: larger files are left out of the snapshot
	DefaultTimeout = 10 * time.Second
	// ColdTimeout bounds the first snapshot of a workspace, which hashes every
	// file; later ones (of any session there: indexes are seeded) hash only
	// what changed.
	ColdTimeout = 2 * time.Minute
	// maxExclude caps the repository's info/exclude: a command can plant any
	// file there (a link to /dev/zero, a FIFO).
	maxExclude = 1 << 20
)

// Errors a snapshot can end with.
var (
	ErrNoGit   = errors.New("git is not installed: changes made by commands cannot be undone")
	ErrTimeout = errors.New("the snapshot took too long: changes made by commands cannot be undone")
)

// Options bound a Store's snapshots; the zero value takes the defaults.
type Options struct {
	MaxFile int64
	Timeout time.Duration
	// Exclude are directories (absolute) never snapshotted, such as dsh's
	// session logs when they are inside the workspace; the store's own is one.
	Exclude []string
	// Ignore are the user's gitignore patterns for files never snapshotted
	// (config.toml's checkpoint_exclude), beside the repository's own rules.
	Ignore []string
}

// Store is one workspace's shadow object store, with one index (its stat cache)
// per user of it, so that sessions in the same workspace share objects without
// contending for one index. A Store may be shared: snapshots asked for while
// one runs are taken together, by one snapshot that starts after they were
// asked for.
type Store struct {
	git, dir, root, index string
	o                     Options

	mu      sync.Mutex
	next    *flight // the snapshot the callers since the running one started wait for
	running bool
	// last is the tree the index was written to, and the index's stat then:
	// while nothing changed since, the tree is the same and need not be
	// written again. Only the running snapshot reads or writes it.
	last struct {
		tree string
		fi   os.FileInfo
	}
	// swept says the index was cleared of what it holds and must not (only
	// the running snapshot reads or writes it).
	swept bool
	// walks counts the snapshots taken (each walks the tree).
	walks atomic.Int64
	trees treeCache
	// laid are the entries of the files the last walk laid over the
	// index's tree, by path (only the running snapshot reads or writes it).
	laid map[string]laidFile
}

// flight is one snapshot and the callers waiting for it.
type flight struct {
	done    chan struct{}
	waiters int
	stop    context.CancelFunc // set once it runs: the last waiter gone, it is not finished
	snap    Snapshot
	err     error
}

// Open opens (creating it if needed) the shadow store dir for the workspace
// root, with the index named index (a session id). It is ErrNoGit without git.
func Open(dir, root, index string, o Options) (*Store, error) {
	git, err := exec.LookPath("git")
	if err != nil {
		return nil, ErrNoGit
	}
	if o.MaxFile <= 0 {
		o.MaxFile = DefaultMaxFile
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	s := &Store{git: git, dir: dir, root: root, index: filepath.Join(dir, "indexes", index), o: o}
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Join(dir, "indexes"), 0o700); err != nil {
			return nil, fmt.Errorf("checkpoint store: %w", err)
		}
		// In the background of a session's start, behind its own work.
		if _, err := s.run(context.WithValue(context.Background(), niceKey{}, true), nil, "init", "--quiet"); err != nil {
			// Another process may have made it meanwhile (git init locks the
			// config it writes).
			if _, serr := os.Stat(filepath.Join(dir, "HEAD")); serr != nil {
				return nil, err
			}
		}
	}
	seedIndex(s.index)
	s.recallTree()
	return s, nil
}

// seedIndex starts a new index from the newest one beside it: its stat cache
// spares the first snapshot of a session from hashing every file again.
func seedIndex(index string) {
	if _, err := os.Stat(index); err == nil {
		return
	}
	ents, err := os.ReadDir(filepath.Dir(index))
	if err != nil {
		return
	}
	var newest string
	var at time.Time
	for _, e := range ents {
		name := e.Name()
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && !strings.HasSuffix(name, ".lock") && !strings.HasSuffix(name, treeSuffix) && fi.ModTime().After(at) {
			newest, at = filepath.Join(filepath.Dir(index), e.Name()), fi.ModTime()
		}
	}
	// A missing seed only costs time; a half-written one, read as the newest
	// by another session, would fail its snapshots: it is written aside first.
	if b, err := os.ReadFile(newest); err == nil && newest != "" {
		tmp := index + ".seed.lock"
		if os.WriteFile(tmp, b, 0o600) == nil && os.Rename(tmp, index) != nil {
			_ = os.Remove(tmp)
		}
		seedTree(newest, index)
	}
}

// Snapshot is one state of the workspace.
type Snapshot struct {
	Tree string
	// Skipped are the files left out because they are over the size cap: what a
	// command does to them cannot be undone.
	Skipped []string
	// Secrets are the files left out because their names say they hold
	// secrets; an undo cannot restore them either.
	Secrets []string
	// Notice says what of the repository's ignore rules could not be used.
	Notice string
}

// Snapshot records the workspace as it is now. It lists what changed since the
// index last saw it (one walk, honouring the ignore rules), hashes only those
// files and writes the tree. It ends with ErrTimeout past the time bound.
//
// Callers at the same time share one snapshot that starts after each of them
// called (many sessions of a workspace that start their prompts together take
// one or two, not one each). A caller's ctx ends its wait; when the last
// caller waiting has gone, the snapshot is stopped, and waited for.
func (s *Store) Snapshot(ctx context.Context) (Snapshot, error) {
	s.mu.Lock()
	f := s.next
	if f == nil {
		f = &flight{done: make(chan struct{})}
		s.next = f
		if !s.running {
			s.running = true
			go s.fly()
		}
	}
	f.waiters++
	s.mu.Unlock()
	select {
	case <-f.done:
		sn := f.snap
		sn.Skipped, sn.Secrets = slices.Clone(sn.Skipped), slices.Clone(sn.Secrets)
		return sn, f.err
	case <-ctx.Done():
		s.mu.Lock()
		f.waiters--
		stop := f.waiters == 0 && f.stop != nil
		if stop {
			f.stop()
		}
		s.mu.Unlock()
		if stop {
			// Nothing it started outlives the last one who wanted it.
			<-f.done
		}
		return Snapshot{}, fmt.Errorf("checkpoint: %w", ctx.Err())
	}
}

// Walks is how many snapshots walked the tree.
func (s *Store) Walks() int64 { return s.walks.Load() }

// fly takes the snapshots waited for, one after another, until none is.
func (s *Store) fly() {
	for {
		s.mu.Lock()
		f := s.next
		s.next = nil
		if f == nil {
			s.running = false
			s.mu.Unlock()
			return
		}
		if f.waiters == 0 { // all gone before it started
			s.mu.Unlock()
			f.err = context.Canceled
			close(f.done)
			continue
		}
		ctx, stop := context.WithCancel(context.Background())
		f.stop = stop
		s.mu.Unlock()
		f.snap, f.err = s.snapshot(ctx)
		for try := 1; try < walkTries && changedUnder(f.err); try++ {
			f.snap, f.err = s.snapshot(ctx)
		}
		stop()
		close(f.done)
	}
}

// walkTries is how many times a walk is taken while files change under it.
const walkTries = 3

// changedUnder says git failed a walk because a file changed while it read
// it (a file tool or a command writing it as the walk passed): the next walk
// reads it whole.
func changedUnder(err error) bool {
	return err != nil && strings.Contains(err.Error(), "short read while indexing")
}

func (s *Store) snapshot(parent context.Context) (Snapshot, error) {
	s.walks.Add(1)
	bound := s.o.Timeout
	_, err := os.Stat(s.index)
	cold := err != nil
	if cold {
		bound = max(bound, ColdTimeout)
		// It hashes every file, seconds of CPU, mostly while nobody waits
		// for it: the session's own work goes first.
		parent = context.WithValue(parent, niceKey{}, true)
	}
	ctx, cancel := context.WithTimeout(parent, bound)
	defer cancel()
	var snap Snapshot
	notice, err := s.syncExcludes()
	if err != nil {
		return Snapshot{}, err
	}
	snap.Notice = notice
	out, err := s.run(ctx, nil, "ls-files", "-z", "--others", "--modified", "--exclude-standard")
	if err != nil {
		return Snapshot{}, s.bound(ctx, err)
	}
	var add, gone []byte
	seen := map[string]bool{}
	if cold {
		s.swept = true // an index not made yet holds nothing
	}
	// What the sweep takes out of the index must go from it: a tree laid
	// over the index's would keep it at the next walk.
	lay := true
	if !s.swept {
		held, err := s.sweep(ctx)
		if err != nil {
			return Snapshot{}, s.bound(ctx, err)
		}
		lay = len(held) == 0
		for _, p := range held {
			seen[p] = true
			gone = append(append(gone, p...), 0)
			if secret(p) {
				snap.Secrets = append(snap.Secrets, p)
			}
		}
		s.swept = true
	}
	for p := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		// A nested repository lists as its directory; its files are its own.
		if p == "" || strings.HasSuffix(p, "/") || seen[p] {
			continue
		}
		seen[p] = true
		if secret(p) {
			snap.Secrets = append(snap.Secrets, p)
			gone = append(append(gone, p...), 0)
			continue
		}
		fi, err := os.Lstat(filepath.Join(s.root, p))
		if err == nil && fi.Mode().IsRegular() && fi.Size() > s.o.MaxFile {
			snap.Skipped = append(snap.Skipped, p)
			gone = append(append(gone, p...), 0)
			continue
		}
		if err == nil && fi.IsDir() {
			// A file the index holds, a directory now: update-index will
			// not take it (its files are listed on their own).
			gone = append(append(gone, p...), 0)
			continue
		}
		add = append(append(add, p...), 0)
	}
	if lay {
		if tree, ok := s.layWalked(ctx, add, gone); ok {
			snap.Tree = tree
			return snap, nil
		}
	}
	if len(gone) > 0 {
		if _, err := s.run(ctx, gone, "update-index", "-z", "--force-remove", "--stdin"); err != nil {
			return Snapshot{}, s.bound(ctx, err)
		}
	}
	if len(add) > 0 {
		if _, err := s.run(ctx, add, "update-index", "-z", "--add", "--remove", "--replace", "--stdin"); err != nil {
			return Snapshot{}, s.bound(ctx, err)
		}
	}
	// Nothing added and the index as the last write left it: the same tree.
	if len(add) == 0 && s.last.fi != nil {
		if fi, err := os.Stat(s.index); err == nil && sameFile(fi, s.last.fi) {
			snap.Tree = s.last.tree
			return snap, nil
		}
	}
	tree, err := s.run(ctx, nil, "write-tree")
	if err != nil {
		return Snapshot{}, s.bound(ctx, err)
	}
	snap.Tree = strings.TrimSpace(string(tree))
	s.last.tree, s.last.fi = snap.Tree, nil
	if fi, err := os.Stat(s.index); err == nil {
		s.last.fi = fi
		s.noteTree(snap.Tree)
	}
	return snap, nil
}

// maxLaid is the most files a walk lays over the index's tree without
// updating the index; past it, the index is brought up to date.
const maxLaid = 64

// layWalked is the tree of the index (as its last write left it) with the
// files a walk found changed since (add, gone: NUL-terminated paths) laid
// over it, in-process: git's update-index and write-tree read and rewrite the
// whole index, twice a walk's own time on Go's src for one changed file.
// The index stays as it was, so a later walk finds them again (and takes
// their entries from s.laid while their stat is unchanged); ok is false when
// it must be updated (too many changes, a file that cannot be read).
func (s *Store) layWalked(ctx context.Context, add, gone []byte) (string, bool) {
	if s.last.fi == nil || bytes.Count(add, []byte{0})+bytes.Count(gone, []byte{0}) > maxLaid {
		return "", false
	}
	if fi, err := os.Stat(s.index); err != nil || !sameFile(fi, s.last.fi) {
		return "", false
	}
	want, next := map[string]Entry{}, map[string]laidFile{}
	for p := range strings.SplitSeq(strings.TrimSuffix(string(gone), "\x00"), "\x00") {
		if p != "" {
			want[p] = Entry{}
		}
	}
	for p := range strings.SplitSeq(strings.TrimSuffix(string(add), "\x00"), "\x00") {
		if p == "" {
			continue
		}
		e, ok := s.laidEntry(p, s.last.tree, next)
		if !ok {
			// A directory now (its files are listed on their own), or a file
			// that cannot be read: git says which.
			return "", false
		}
		want[p] = e
	}
	s.laid = next // none of the rest is read again: the index holds it
	if len(want) == 0 {
		return s.last.tree, true
	}
	tree, err := s.edit(s.last.tree, want)
	if errors.Is(err, errPacked) {
		es := make([]pathEntry, 0, len(want))
		for _, p := range slices.Sorted(maps.Keys(want)) {
			es = append(es, pathEntry{p, want[p]})
		}
		_, tree, err = s.applyGit(ctx, s.last.tree, nil, es)
	}
	return tree, err == nil
}

// sweep lists what the index holds from earlier snapshots (an index seeded
// from another session's, or written before a rule) that it must not: files
// named like secrets, and files the ignore rules cover now — git keeps
// snapshotting a file it holds, whatever the rules say since.
func (s *Store) sweep(ctx context.Context) ([]string, error) {
	var out []string
	held, err := s.run(ctx, nil, "ls-files", "-z", "--cached")
	if err != nil {
		return nil, err
	}
	for p := range strings.SplitSeq(strings.TrimSuffix(string(held), "\x00"), "\x00") {
		if p != "" && secret(p) {
			out = append(out, p)
		}
	}
	ignored, err := s.run(ctx, nil, "ls-files", "-z", "--cached", "--ignored", "--exclude-standard")
	if err != nil {
		return nil, err
	}
	for p := range strings.SplitSeq(strings.TrimSuffix(string(ignored), "\x00"), "\x00") {
		if p != "" && !secret(p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// sameFile reports whether a and b are one file, unchanged between the two.
func sameFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// bound turns a failure past the deadline into ErrTimeout.
func (s *Store) bound(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		// The killed git leaves its lock behind, which would fail every later
		// snapshot.
		_ = os.Remove(s.index + ".lock")
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ErrTimeout
	}
	return err
}

// syncExcludes makes the repository's own info/exclude (not versioned, so not
// seen as a .gitignore) part of the store's ignore rules, after the
// directories that are dsh's own and the user's patterns. The file is read as
// a repository's file is — inside it, a regular file, capped, never waiting on
// a FIFO — since a command may have put anything there; one that cannot be
// read is left out, and notice says why.
func (s *Store) syncExcludes() (notice string, err error) {
	user, more, err := workspace.ReadProjectFile(s.root, filepath.Join(".git", "info", "exclude"), maxExclude)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		user = nil
	case err != nil:
		user, notice = nil, fmt.Sprintf("checkpoints do not use the repository's exclude rules: %v", err)
	case more:
		// A pattern cut in two would be another pattern.
		user = user[:bytes.LastIndexByte(user, '\n')+1]
		notice = fmt.Sprintf("checkpoints use only the first %d KiB of .git/info/exclude", maxExclude>>10)
	}
	var b []byte
	for _, d := range append([]string{s.dir}, s.o.Exclude...) {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			d = r
		}
		if rel, err := filepath.Rel(s.root, d); err == nil && rel != "." && filepath.IsLocal(rel) {
			b = append(b, "/"+escapeGlob(filepath.ToSlash(rel))+"/\n"...)
		}
	}
	for _, p := range s.o.Ignore {
		if p = strings.TrimSpace(p); p != "" {
			b = append(b, p+"\n"...)
		}
	}
	// The repository's rules come last, but cannot bring dsh's directories
	// back: git does not look inside an excluded directory.
	b = append(b, user...)
	path := filepath.Join(s.dir, "info", "exclude")
	// The store may be inside the workspace (a session directory there): its
	// own file is read as carefully, and replaced rather than written through
	// whatever is there now.
	if old, _, err := workspace.ReadOwnFile(path, len(b)+1); err == nil && bytes.Equal(old, b) {
		return notice, nil
	}
	if err := workspace.WriteOwnFile(path, b, 0o600); err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	return notice, nil
}

// secret reports whether the name of the file at slash path p says it holds
// a secret: environment files, private keys, credential stores. Such a file is
// never copied into the store, ignored or not.
func secret(p string) bool {
	name := strings.ToLower(p[strings.LastIndexByte(p, '/')+1:])
	if name == ".env" || strings.HasPrefix(name, ".env.") && !slices.Contains(envTemplates, name[len(".env."):]) {
		return true
	}
	if slices.Contains(secretNames, name) {
		return true
	}
	return slices.ContainsFunc(secretExts, func(ext string) bool { return strings.HasSuffix(name, ext) })
}

var (
	// envTemplates are the suffixes of .env files that are examples, not secrets.
	envTemplates = []string{"example", "sample", "template", "dist", "defaults"}
	secretNames  = []string{
		"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk",
		".netrc", ".pgpass", ".npmrc", ".pypirc", ".git-credentials", "credentials.json",
	}
	secretExts = []string{".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx"}
)

// escapeGlob makes a path a literal gitignore pattern.
func escapeGlob(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`\*?[!# `, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Change is one file that differs between two trees, with its line counts
// (-1 for a binary file).
type Change struct {
	Path           string
	Added, Removed int
}

// Changes lists the files that differ from tree from to tree to, among paths
// if any are given.
func (s *Store) Changes(ctx context.Context, from, to string, paths ...string) ([]Change, error) {
	args := append([]string{"--literal-pathspecs", "diff-tree", "-r", "-z", "--no-renames", "--numstat", from, to, "--"}, paths...)
	out, err := s.run(ctx, nil, args...)
	if err != nil {
		return nil, err
	}
	var cs []Change
	for f := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		a, rest, ok1 := strings.Cut(f, "\t")
		r, path, ok2 := strings.Cut(rest, "\t")
		if !ok1 || !ok2 {
			continue
		}
		c := Change{Path: path, Added: -1, Removed: -1}
		if n, err := strconv.Atoi(a); err == nil {
			c.Added = n
		}
		if n, err := strconv.Atoi(r); err == nil {
			c.Removed = n
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// Entry is a path's state in a tree: absent, or a blob with its mode.
type Entry struct {
	Mode string // "100644", "100755", "120000" (a symlink) or "160000" (a nested repository)
	ID   string // "" when the tree does not hold the path
}

// Entries returns the state of each of paths in tree.
func (s *Store) Entries(ctx context.Context, tree string, paths []string) (map[string]Entry, error) {
	m := make(map[string]Entry, len(paths))
	if len(paths) == 0 {
		return m, nil
	}
	// --literal-pathspecs: a path is a name, never a pattern.
	args := append([]string{"--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree", tree, "--"}, paths...)
	out, err := s.run(ctx, nil, args...)
	if err != nil {
		return nil, err
	}
	for f := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		meta, path, ok := strings.Cut(f, "\t")
		fields := strings.Fields(meta)
		if ok && len(fields) == 3 {
			m[path] = Entry{Mode: fields[0], ID: fields[2]}
		}
	}
	return m, nil
}

// Blobs reads the contents of the objects ids, in one git process.
func (s *Store) Blobs(ctx context.Context, ids []string) (map[string][]byte, error) {
	m := make(map[string][]byte, len(ids))
	var in bytes.Buffer
	for _, id := range ids {
		if id != "" {
			in.WriteString(id + "\n")
		}
	}
	if in.Len() == 0 {
		return m, nil
	}
	out, err := s.run(ctx, in.Bytes(), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	r := bufio.NewReader(bytes.NewReader(out))
	for {
		head, err := r.ReadString('\n')
		if errors.Is(err, io.EOF) {
			return m, nil
		}
		if err != nil {
			return nil, fmt.Errorf("checkpoint: reading objects: %w", err)
		}
		f := strings.Fields(head)
		if len(f) != 3 {
			return nil, fmt.Errorf("checkpoint: object %s is missing", strings.TrimSpace(head))
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("checkpoint: object header %q: %w", head, err)
		}
		b := make([]byte, n+1) // the content and its newline
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, fmt.Errorf("checkpoint: reading object %s: %w", f[0], err)
		}
		m[f[0]] = b[:n]
	}
}

// Put makes each path of the workspace what want says (the state of a tree,
// contents from Blobs): written with its mode, or removed when the entry is
// absent, with directories made or emptied as needed. Paths are resolved inside
// the workspace (os.Root): a symlink cannot lead a restore out of it.
func (s *Store) Put(want map[string]Entry, blobs map[string][]byte) error {
	root, err := os.OpenRoot(s.root)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer func() { _ = root.Close() }()
	paths := slices.Sorted(func(yield func(string) bool) {
		for p := range want {
			if !yield(p) {
				return
			}
		}
	})
	// Removals first: a file may give way to a directory of the same name.
	for _, p := range paths {
		if want[p].ID == "" {
			if err := removeFile(root, p); err != nil {
				return err
			}
		}
	}
	for _, p := range paths {
		e := want[p]
		if e.ID == "" || e.Mode == "160000" {
			continue
		}
		if err := putFile(root, p, e, blobs[e.ID]); err != nil {
			return err
		}
	}
	return nil
}

func removeFile(root *os.Root, p string) error {
	if err := root.RemoveAll(filepath.FromSlash(p)); err != nil {
		return fmt.Errorf("restore %s: %w", p, err)
	}
	// Directories the file leaves empty go with it (git keeps no empty ones).
	for d := parentDir(p); d != "."; d = parentDir(d) {
		if root.Remove(filepath.FromSlash(d)) != nil {
			break
		}
	}
	return nil
}

func parentDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "."
	}
	return p[:i]
}

func putFile(root *os.Root, p string, e Entry, content []byte) error {
	// A parent that is now a file (a directory replaced by one) gives way.
	for d := parentDir(p); d != "."; d = parentDir(d) {
		if fi, err := root.Lstat(filepath.FromSlash(d)); err == nil && !fi.IsDir() {
			if err := root.Remove(filepath.FromSlash(d)); err != nil {
				return fmt.Errorf("restore %s: %w", p, err)
			}
		}
	}
	name := filepath.FromSlash(p)
	if d := filepath.Dir(name); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("restore %s: %w", p, err)
		}
	}
	if err := root.RemoveAll(name); err != nil {
		return fmt.Errorf("restore %s: %w", p, err)
	}
	if e.Mode == "120000" {
		if err := root.Symlink(string(content), name); err != nil {
			return fmt.Errorf("restore %s: %w", p, err)
		}
		return nil
	}
	perm := os.FileMode(0o644)
	if e.Mode == "100755" {
		perm = 0o755
	}
	if err := root.WriteFile(name, content, perm); err != nil {
		return fmt.Errorf("restore %s: %w", p, err)
	}
	return nil
}

// niceKey marks the context of a snapshot whose git runs behind the
// session's own work.
type niceKey struct{}

// niceness is that git's: about a tenth of the CPU's share of a process
// beside it, never starved.
const niceness = 10

// run runs git on the store with stdin in (nil: none) and returns its output.
func (s *Store) run(ctx context.Context, in []byte, args ...string) ([]byte, error) {
	return s.runIndex(ctx, s.index, in, args...)
}

// runIndex is run with the index file index.
func (s *Store) runIndex(ctx context.Context, index string, in []byte, args ...string) ([]byte, error) {
	base := []string{
		// The store is dsh's own: no hooks, no monitor, no line-ending rewriting,
		// no background gc of objects a session log still names.
		"-c", "core.fsmonitor=false", "-c", "core.autocrlf=false", "-c", "core.safecrlf=false",
		"-c", "gc.auto=0", "-c", "core.quotepath=off", "-c", "core.symlinks=true",
	}
	cmd := exec.CommandContext(ctx, s.git, append(base, args...)...)
	cmd.Dir = s.root
	cmd.Env = append(os.Environ(), "GIT_DIR="+s.dir, "GIT_WORK_TREE="+s.root, "GIT_INDEX_FILE="+index,
		"GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	cmd.Env = slices.DeleteFunc(cmd.Env, func(kv string) bool {
		// The user's repository settings must not leak in from the environment.
		return strings.HasPrefix(kv, "GIT_CEILING") || strings.HasPrefix(kv, "GIT_OBJECT_DIRECTORY=") ||
			strings.HasPrefix(kv, "GIT_ALTERNATE_OBJECT_DIRECTORIES=") || strings.HasPrefix(kv, "GIT_COMMON_DIR=") ||
			strings.HasPrefix(kv, "GIT_NAMESPACE=")
	})
	if in != nil {
		cmd.Stdin = bytes.NewReader(in)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// Past the deadline git is killed; nothing it left running may hold the
	// pipes and so the snapshot, which other sessions wait for.
	cmd.WaitDelay = time.Second
	dieWithDsh(cmd)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	err := cmd.Start()
	if err == nil {
		if ctx.Value(niceKey{}) != nil {
			idle(cmd.Process.Pid) // only slower without it
		}
		err = cmd.Wait()
	}
	out := stdout.Bytes()
	if err != nil {
		verb := args[slices.IndexFunc(args, func(a string) bool { return !strings.HasPrefix(a, "-") })]
		return nil, fmt.Errorf("checkpoint: git %s: %w: %s", verb, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
