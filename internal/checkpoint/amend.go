package checkpoint

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1" // git's object ids, not a security check
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/dsh-dev/dsh/internal/workspace"
)

// State is a file as it was at some moment: absent, a regular file (Exec
// says with the executable bit) or a symlink (Link), and its content (a
// link's target).
type State struct {
	Absent, Exec, Link bool
	Content            []byte
}

// mode is the state's tree entry mode.
func (st State) mode() string {
	switch {
	case st.Link:
		return "120000"
	case st.Exec:
		return "100755"
	default:
		return "100644"
	}
}

// objectID is the id git gives an object of type typ, in the hash of an id
// like like (SHA-1 or SHA-256 stores), computed here: most files are found
// unchanged without asking git.
func objectID(typ string, content []byte, like string) string {
	head := fmt.Appendf(nil, "%s %d\x00", typ, len(content))
	if len(like) == 64 {
		h := sha256.New()
		h.Write(head)
		h.Write(content)
		return hex.EncodeToString(h.Sum(nil))
	}
	h := sha1.New()
	h.Write(head)
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// Lay returns tree with the states pre (by slash path) laid over it, and
// that with post laid over it: a prompt's "before" and "after" when dsh knows
// which files it changed and how they were before and after. Paths that
// snapshots leave out stay out: one tree does not hold that is inside a .git
// directory, named like a secret, or ignored (a state over the size cap is
// not read).
func (s *Store) Lay(ctx context.Context, tree string, pre, post map[string]State) (before, after string, err error) {
	// Taken after a prompt, while its answer goes out: what git it runs
	// runs behind.
	return s.lay(context.WithValue(ctx, niceKey{}, true), tree, pre, post, true)
}

// lay is Lay, which leaves out what snapshots do when filter is set.
func (s *Store) lay(ctx context.Context, tree string, pre, post map[string]State, filter bool) (before, after string, err error) {
	paths := slices.Sorted(maps.Keys(pre))
	for p := range post {
		if _, ok := pre[p]; !ok {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return tree, tree, nil
	}
	have := make(map[string]Entry, len(paths))
	for _, p := range paths {
		if have[p], err = s.lookup(tree, p); err != nil {
			break
		}
	}
	packed := errors.Is(err, errPacked)
	if packed {
		have, err = s.Entries(ctx, tree, paths)
	}
	if err != nil {
		return "", "", err
	}
	out := map[string]bool{}
	if filter {
		if out, err = s.outside(ctx, have, paths); err != nil {
			return "", "", err
		}
	}
	cur := maps.Clone(have)
	preEdits, err := s.edits(cur, pre, out, tree)
	if err != nil {
		return "", "", err
	}
	postEdits, err := s.edits(cur, post, out, tree)
	if err != nil {
		return "", "", err
	}
	if !packed {
		before, err = s.applyHere(tree, preEdits)
		if err == nil {
			after, err = s.applyHere(before, postEdits)
		}
		if !errors.Is(err, errPacked) {
			return before, after, err
		}
	}
	return s.applyGit(ctx, tree, preEdits, postEdits)
}

// edits are the entries states make that differ from cur (which they
// update), their contents stored; paths out are left out.
func (s *Store) edits(cur map[string]Entry, states map[string]State, out map[string]bool, like string) ([]pathEntry, error) {
	var es []pathEntry
	for _, p := range slices.Sorted(maps.Keys(states)) {
		if out[p] {
			continue
		}
		st := states[p]
		want := Entry{}
		if !st.Absent {
			want = Entry{Mode: st.mode(), ID: objectID("blob", st.Content, like)}
		}
		if want == cur[p] {
			continue
		}
		cur[p] = want
		if want.ID != "" {
			if err := s.store("blob", want.ID, st.Content); err != nil {
				return nil, err
			}
		}
		es = append(es, pathEntry{p, want})
	}
	return es, nil
}

type pathEntry struct {
	path string
	Entry
}

// applyHere edits tree in the loose objects.
func (s *Store) applyHere(tree string, es []pathEntry) (string, error) {
	if len(es) == 0 {
		return tree, nil
	}
	want := make(map[string]Entry, len(es))
	for _, e := range es {
		want[e.path] = e.Entry
	}
	return s.edit(tree, want)
}

// applyGit is Lay's edits made by git, in a temporary index.
func (s *Store) applyGit(ctx context.Context, tree string, pre, post []pathEntry) (before, after string, err error) {
	info := func(es []pathEntry) []byte {
		var b bytes.Buffer
		for _, e := range es {
			if e.ID == "" {
				fmt.Fprintf(&b, "0 %s\t%s\x00", strings.Repeat("0", len(tree)), e.path)
			} else {
				fmt.Fprintf(&b, "%s %s\t%s\x00", e.Mode, e.ID, e.path)
			}
		}
		return b.Bytes()
	}
	before, after = tree, tree
	if len(pre) == 0 && len(post) == 0 {
		return before, after, nil
	}
	f, err := os.CreateTemp(s.dir, "lay-*.lock")
	if err != nil {
		return "", "", fmt.Errorf("checkpoint: %w", err)
	}
	index := f.Name()
	_ = f.Close()
	_ = os.Remove(index) // git makes it; an empty file is no index
	defer func() { _ = os.Remove(index) }()
	if _, err := s.runIndex(ctx, index, nil, "read-tree", tree); err != nil {
		return "", "", err
	}
	write := func(es []pathEntry) (string, error) {
		if _, err := s.runIndex(ctx, index, info(es), "update-index", "-z", "--index-info"); err != nil {
			return "", err
		}
		out, err := s.runIndex(ctx, index, nil, "write-tree")
		return strings.TrimSpace(string(out)), err
	}
	if len(pre) > 0 {
		if before, err = write(pre); err != nil {
			return "", "", err
		}
		after = before
	}
	if len(post) > 0 {
		if after, err = write(post); err != nil {
			return "", "", err
		}
	}
	return before, after, nil
}

// outside says which of paths that tree does not hold (have) snapshots leave
// out: inside a .git directory, named like a secret, or ignored.
func (s *Store) outside(ctx context.Context, have map[string]Entry, paths []string) (map[string]bool, error) {
	out := map[string]bool{}
	var ask bytes.Buffer
	for _, p := range paths {
		if have[p].ID != "" {
			continue
		}
		if secret(p) || slices.ContainsFunc(strings.Split(p, "/"), func(c string) bool { return strings.EqualFold(c, ".git") }) {
			out[p] = true
			continue
		}
		if ignored, known := s.ignoredHere(p); known {
			out[p] = ignored
			continue
		}
		ask.WriteString(p + "\x00")
	}
	if ask.Len() == 0 {
		return out, nil
	}
	// check-ignore exits 1 when none is ignored.
	res, err := s.run(ctx, ask.Bytes(), "check-ignore", "-z", "--no-index", "--stdin")
	if exit := (*exec.ExitError)(nil); err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 1) {
		return nil, err
	}
	for p := range strings.SplitSeq(strings.TrimSuffix(string(res), "\x00"), "\x00") {
		if p != "" {
			out[p] = true
		}
	}
	return out, nil
}

// zlibs are writers of loose objects, at git's own level for them
// (core.looseCompression): each holds most of a megabyte of state, which a
// prompt's few objects would otherwise allocate, clear and collect again.
var zlibs = sync.Pool{New: func() any {
	w, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed) // a valid level: no error
	return w
}}

// store writes content as the loose object id of type typ, unless the store
// has it: a file's content is hashed here, without a process per file.
func (s *Store) store(typ, id string, content []byte) error {
	name := filepath.Join(s.dir, "objects", id[:2], id[2:])
	if _, err := os.Stat(name); err == nil {
		return nil
	}
	var z bytes.Buffer
	w := zlibs.Get().(*zlib.Writer)
	defer zlibs.Put(w)
	w.Reset(&z)
	fmt.Fprintf(w, "%s %d\x00", typ, len(content))
	if _, err := w.Write(content); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(name), "tmp_obj_*")
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	_, err = f.Write(z.Bytes())
	err = errors.Join(err, f.Chmod(0o444), f.Close())
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// ReadState reads the file at slash path p of the workspace root as it is
// now; ok is false for what a snapshot cannot hold (a directory, a special
// file, one over the size cap maxFile, one that cannot be read).
func ReadState(root, p string, maxFile int64) (State, bool) {
	name := filepath.Join(root, filepath.FromSlash(p))
	fi, err := os.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return State{Absent: true}, true
	case err != nil:
		return State{}, false
	case fi.Mode()&os.ModeSymlink != 0:
		t, err := os.Readlink(name)
		return State{Link: true, Content: []byte(t)}, err == nil
	case !fi.Mode().IsRegular() || fi.Size() > maxFile:
		return State{}, false
	}
	// Read as any repository file is: inside it, regular, capped, never
	// waiting on a FIFO swapped in since the Lstat.
	b, more, err := workspace.ReadProjectFile(root, p, int(maxFile))
	return State{Exec: fi.Mode()&0o111 != 0, Content: b}, err == nil && !more
}
