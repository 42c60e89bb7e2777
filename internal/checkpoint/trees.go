package checkpoint

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Trees are edited here, in the store's loose objects, without git: laying a
// prompt's few files over a tree of 10 000 rewrites only the trees on their
// paths (git's read-tree and write-tree of the whole took 100 ms and more).
// A store whose objects git packed is edited by git instead (errPacked).

// errPacked says an object is not a loose one.
var errPacked = errors.New("not a loose object")

// maxTree caps a tree object read here.
const maxTree = 64 << 20

type treeEntry struct {
	mode, name string
	id         []byte // raw
}

func (e treeEntry) dir() bool { return e.mode == "40000" }

// maxCached is the most trees a Store keeps decoded.
const maxCached = 4096

// treeCache keeps trees decoded: an object never changes, and a walk lays its
// files over the same few trees again and again.
type treeCache struct {
	sync.Mutex
	m map[string][]treeEntry
}

// readTree reads the loose tree object id; the entries are shared, not to
// be changed.
func (s *Store) readTree(id string) ([]treeEntry, error) {
	s.trees.Lock()
	es, ok := s.trees.m[id]
	s.trees.Unlock()
	if ok {
		return es, nil
	}
	es, err := s.decodeTree(id)
	if err != nil {
		return nil, err
	}
	s.trees.Lock()
	if s.trees.m == nil || len(s.trees.m) >= maxCached {
		s.trees.m = map[string][]treeEntry{}
	}
	s.trees.m[id] = es
	s.trees.Unlock()
	return es, nil
}

func (s *Store) decodeTree(id string) ([]treeEntry, error) {
	f, err := os.Open(filepath.Join(s.dir, "objects", id[:2], id[2:]))
	if errors.Is(err, os.ErrNotExist) {
		return nil, errPacked
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	defer func() { _ = f.Close() }()
	z, err := zlib.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: tree %s: %w", id, err)
	}
	b, err := io.ReadAll(io.LimitReader(z, maxTree))
	if err != nil {
		return nil, fmt.Errorf("checkpoint: tree %s: %w", id, err)
	}
	head, body, ok := bytes.Cut(b, []byte{0})
	if !ok || !bytes.HasPrefix(head, []byte("tree ")) {
		return nil, fmt.Errorf("checkpoint: %s is not a tree", id)
	}
	if n, err := strconv.Atoi(string(head[len("tree "):])); err != nil || n != len(body) {
		return nil, fmt.Errorf("checkpoint: tree %s is cut short", id)
	}
	raw := len(id) / 2
	var es []treeEntry
	for len(body) > 0 {
		sp := bytes.IndexByte(body, ' ')
		nul := bytes.IndexByte(body, 0)
		if sp < 0 || nul < sp || len(body) < nul+1+raw {
			return nil, fmt.Errorf("checkpoint: tree %s is malformed", id)
		}
		es = append(es, treeEntry{mode: string(body[:sp]), name: string(body[sp+1 : nul]), id: slices.Clone(body[nul+1 : nul+1+raw])})
		body = body[nul+1+raw:]
	}
	return es, nil
}

// writeTree stores the tree of es (in git's order) and returns its id.
func (s *Store) writeTree(es []treeEntry, like string) (string, error) {
	key := func(e treeEntry) string {
		if e.dir() {
			return e.name + "/"
		}
		return e.name
	}
	slices.SortFunc(es, func(a, b treeEntry) int { return strings.Compare(key(a), key(b)) })
	var body bytes.Buffer
	for _, e := range es {
		body.WriteString(e.mode + " " + e.name + "\x00")
		body.Write(e.id)
	}
	id := objectID("tree", body.Bytes(), like)
	return id, s.store("tree", id, body.Bytes())
}

// lookup is path's entry in tree ("" ID: absent).
func (s *Store) lookup(tree, path string) (Entry, error) {
	parts := strings.Split(path, "/")
	for i, name := range parts {
		es, err := s.readTree(tree)
		if err != nil {
			return Entry{}, err
		}
		k := slices.IndexFunc(es, func(e treeEntry) bool { return e.name == name })
		if k < 0 {
			return Entry{}, nil
		}
		e := es[k]
		if i == len(parts)-1 {
			if e.dir() {
				return Entry{}, nil // a directory: no file there
			}
			return Entry{Mode: e.mode, ID: hex.EncodeToString(e.id)}, nil
		}
		if !e.dir() {
			return Entry{}, nil
		}
		tree = hex.EncodeToString(e.id)
	}
	return Entry{}, nil
}

// edit returns tree with each path of want set to its entry (absent:
// removed, and the directories it leaves empty with it), each tree on the
// way rewritten once.
func (s *Store) edit(tree string, want map[string]Entry) (string, error) {
	id, _, err := s.editIn(tree, want, tree)
	if err != nil {
		return "", err
	}
	if id == "" { // the root is never removed: git's empty tree
		return s.writeTree(nil, tree)
	}
	return id, nil
}

// editIn edits tree ("" for none) at the paths of want, relative to it; it
// returns "" for a tree left empty, and whether anything changed.
func (s *Store) editIn(tree string, want map[string]Entry, like string) (string, bool, error) {
	var es []treeEntry
	if tree != "" {
		shared, err := s.readTree(tree)
		if err != nil {
			return "", false, err
		}
		es = slices.Clone(shared)
	}
	here := map[string]Entry{}
	below := map[string]map[string]Entry{}
	for p, e := range want {
		name, rest, deeper := strings.Cut(p, "/")
		if !deeper {
			here[name] = e
			continue
		}
		if below[name] == nil {
			below[name] = map[string]Entry{}
		}
		below[name][rest] = e
	}
	changed := false
	set := func(name string, ne *treeEntry) {
		k := slices.IndexFunc(es, func(e treeEntry) bool { return e.name == name })
		switch {
		case k >= 0 && ne == nil:
			es = slices.Delete(es, k, k+1)
		case k >= 0:
			es[k] = *ne
		case ne != nil:
			es = append(es, *ne)
		default:
			return // nothing there, nothing wanted
		}
		changed = true
	}
	for _, name := range slices.Sorted(maps.Keys(below)) {
		sub := ""
		if k := slices.IndexFunc(es, func(e treeEntry) bool { return e.name == name }); k >= 0 && es[k].dir() {
			sub = hex.EncodeToString(es[k].id)
		}
		id, subChanged, err := s.editIn(sub, below[name], like)
		if err != nil {
			return "", false, err
		}
		if !subChanged {
			continue
		}
		if id == "" {
			set(name, nil)
			continue
		}
		raw, _ := hex.DecodeString(id)
		set(name, &treeEntry{mode: "40000", name: name, id: raw})
	}
	for _, name := range slices.Sorted(maps.Keys(here)) {
		w := here[name]
		if w.ID == "" {
			// A file absent: not the directory of the same name that may
			// stand in its place (laid above).
			if k := slices.IndexFunc(es, func(e treeEntry) bool { return e.name == name }); k < 0 || !es[k].dir() {
				set(name, nil)
			}
			continue
		}
		raw, err := hex.DecodeString(w.ID)
		if err != nil {
			return "", false, fmt.Errorf("checkpoint: %w", err)
		}
		set(name, &treeEntry{mode: w.Mode, name: name, id: raw})
	}
	if !changed {
		return tree, false, nil
	}
	if len(es) == 0 {
		return "", true, nil
	}
	id, err := s.writeTree(es, like)
	return id, true, err
}

// ChangedPaths lists the files that differ between trees from and to, as
// Changes does without the line counts: read here from the loose trees
// (only the trees on changed paths are read), by git when one is packed.
func (s *Store) ChangedPaths(ctx context.Context, from, to string) ([]string, error) {
	var out []string
	err := s.diffTrees(from, to, "", &out)
	if errors.Is(err, errPacked) {
		cs, err := s.Changes(ctx, from, to)
		if err != nil {
			return nil, err
		}
		out = out[:0]
		for _, c := range cs {
			out = append(out, c.Path)
		}
		return out, nil
	}
	return out, err
}

// diffTrees appends to out the files (below prefix) that differ between
// trees a and b ("" for none).
func (s *Store) diffTrees(a, b, prefix string, out *[]string) error {
	if a == b {
		return nil
	}
	entries := func(id string) (map[string]treeEntry, error) {
		m := map[string]treeEntry{}
		if id == "" || id == EmptyTree || id == emptyTree256 {
			return m, nil // git's empty tree need not be stored
		}
		es, err := s.readTree(id)
		for _, e := range es {
			m[e.name] = e
		}
		return m, err
	}
	ea, err := entries(a)
	if err != nil {
		return err
	}
	eb, err := entries(b)
	if err != nil {
		return err
	}
	names := slices.Sorted(maps.Keys(ea))
	for n := range eb {
		if _, ok := ea[n]; !ok {
			names = append(names, n)
		}
	}
	for _, n := range names {
		x, inA := ea[n]
		y, inB := eb[n]
		if inA && inB && x.mode == y.mode && bytes.Equal(x.id, y.id) {
			continue
		}
		if inA && !x.dir() || inB && !y.dir() {
			*out = append(*out, prefix+n)
		}
		var subA, subB string
		if inA && x.dir() {
			subA = hex.EncodeToString(x.id)
		}
		if inB && y.dir() {
			subB = hex.EncodeToString(y.id)
		}
		if subA != "" || subB != "" {
			if err := s.diffTrees(subA, subB, prefix+n+"/", out); err != nil {
				return err
			}
		}
	}
	return nil
}

// emptyTree256 is git's empty tree in a SHA-256 store.
const emptyTree256 = "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"
