package checkpoint

import (
	"context"
	"fmt"
	"slices"
)

// Span is one change to the workspace that can be undone (a prompt, a restore):
// its state before and after.
type Span struct{ Before, After string }

// File is one file a restore puts back.
type File struct {
	Path string
	// Now is the file as it is, Want as the restore leaves it (ID "" : absent);
	// Old and New are their contents.
	Now, Want Entry
	Old, New  []byte
	// Added and Removed count the lines the restore adds and removes (-1: binary).
	Added, Removed int
	// User says the user changed the file after the agent last did: the restore
	// leaves it alone unless told otherwise.
	User bool
}

// Plan is what undoing spans, to get back to the state before the first of
// them, would do to the workspace as it is in tree Now.
type Plan struct {
	Now   string
	Files []File
}

// Plan works out how to undo spans (in order) from the workspace state now: each
// file any of them changed goes back to what it was before the first, unless the
// user changed it after the last span that changed it (File.User). Files already
// as wanted are left out.
func (s *Store) Plan(ctx context.Context, now string, spans []Span) (Plan, error) {
	p := Plan{Now: now}
	if len(spans) == 0 {
		return p, nil
	}
	left := map[string]string{} // path → the tree of the last span that changed it
	var paths []string
	for _, sp := range spans {
		if sp.Before == "" || sp.After == "" {
			return p, fmt.Errorf("a change has no snapshot to go back to")
		}
		cs, err := s.Changes(ctx, sp.Before, sp.After)
		if err != nil {
			return p, err
		}
		for _, c := range cs {
			if _, ok := left[c.Path]; !ok {
				paths = append(paths, c.Path)
			}
			left[c.Path] = sp.After
		}
	}
	slices.Sort(paths)
	cur, err := s.Entries(ctx, now, paths)
	if err != nil {
		return p, err
	}
	want, err := s.Entries(ctx, spans[0].Before, paths)
	if err != nil {
		return p, err
	}
	agent := map[string]Entry{}
	byTree := map[string][]string{}
	for _, path := range paths {
		byTree[left[path]] = append(byTree[left[path]], path)
	}
	for tree, ps := range byTree {
		es, err := s.Entries(ctx, tree, ps)
		if err != nil {
			return p, err
		}
		for _, path := range ps {
			agent[path] = es[path]
		}
	}
	var todo, ids []string
	for _, path := range paths {
		if cur[path] == want[path] {
			continue
		}
		todo = append(todo, path)
		ids = append(ids, cur[path].ID, want[path].ID)
	}
	if len(todo) == 0 {
		return p, nil
	}
	blobs, err := s.Blobs(ctx, ids)
	if err != nil {
		return p, err
	}
	counts, err := s.changesIn(ctx, now, spans[0].Before, todo)
	if err != nil {
		return p, err
	}
	for _, path := range todo {
		c := counts[path]
		p.Files = append(p.Files, File{
			Path: path, Now: cur[path], Want: want[path],
			Old: blobs[cur[path].ID], New: blobs[want[path].ID],
			Added: c.Added, Removed: c.Removed,
			User: cur[path] != agent[path],
		})
	}
	return p, nil
}

func (s *Store) changesIn(ctx context.Context, from, to string, paths []string) (map[string]Change, error) {
	cs, err := s.Changes(ctx, from, to, paths...)
	if err != nil {
		return nil, err
	}
	m := make(map[string]Change, len(cs))
	for _, c := range cs {
		m[c.Path] = c
	}
	return m, nil
}

// Apply writes the plan's files, those the user changed too when overwrite is
// set, and returns the paths it wrote.
func (s *Store) Apply(p Plan, overwrite bool) ([]string, error) {
	want := map[string]Entry{}
	blobs := map[string][]byte{}
	var done []string
	for _, f := range p.Files {
		if f.User && !overwrite {
			continue
		}
		want[f.Path] = f.Want
		blobs[f.Want.ID] = f.New
		done = append(done, f.Path)
	}
	return done, s.Put(want, blobs)
}
