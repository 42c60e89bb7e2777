package host

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/dsh-dev/dsh/internal/checkpoint"
	"github.com/dsh-dev/dsh/internal/session"
)

// maxDiffTotal caps the texts one /diff logs in all; files past it are
// listed with their counts, their texts left out.
const maxDiffTotal = 4 << 20

// diffCommand is /diff [N]: what the session changed in the files, from
// before its first prompt to the end of its last change, or what change N
// (as /rewind lists them: a prompt's, or an undo's) changed, as a diff the
// consumers show as hunks.
func (s *Session) diffCommand(ctx context.Context, args string) (Reply, error) {
	s.settle(ctx)
	spans := s.undo.list()
	if len(spans) == 0 {
		return Reply{Text: "There is no change to show yet."}, nil
	}
	from, to := 0, len(spans)-1
	if args != "" {
		n, err := strconv.Atoi(args)
		if err != nil || n < 1 || n > len(spans) {
			return Reply{Text: fmt.Sprintf("Cannot show a diff: want /diff [N], N a change from 1 to %d (/rewind lists them).", len(spans))}, nil
		}
		from, to = n-1, n-1
	}
	st, err := s.checkpointStore()
	if err != nil {
		return Reply{Text: "Cannot show a diff: " + err.Error() + "."}, nil
	}
	before := spans[from].before
	after := spans[to].after
	switch {
	case after == "" && to+1 < len(spans):
		after = spans[to+1].before
	case after == "": // a turn that did not end: what it left is what there is
		now, err := st.Snapshot(ctx)
		if err != nil {
			return Reply{Text: "Cannot show a diff: " + err.Error() + "."}, nil
		}
		after = now.Tree
	}
	what := changeName(spans, from, to)
	if before == "" {
		return Reply{Text: fmt.Sprintf("Cannot show what %s changed: %s.", what, orDefault(spans[from].note, "no snapshot was taken"))}, nil
	}
	files, err := diffFiles(ctx, st, before, after)
	if err != nil {
		return Reply{}, err
	}
	if len(files) == 0 {
		return Reply{Text: upperFirst(what) + " changed no files."}, nil
	}
	// The card counts the lines; the title names the files.
	names := make([]string, 0, 3)
	for _, f := range files[:min(len(files), 3)] {
		names = append(names, f.Path)
	}
	if n := len(files) - len(names); n > 0 {
		names = append(names, fmt.Sprintf("%d more", n))
	}
	return Reply{Text: upperFirst(what) + " changed " + strings.Join(names, ", "), Diff: files}, nil
}

// changeName names the changes from to to (indexes into spans) as the user
// knows them.
func changeName(spans []span, from, to int) string {
	if from != to {
		return "the session"
	}
	sp := spans[from]
	if sp.prompt == 0 {
		return fmt.Sprintf("change %d (an undo)", from+1)
	}
	text := oneLineText(sp.text, 40)
	if text == "" {
		return fmt.Sprintf("prompt %d", sp.prompt)
	}
	return fmt.Sprintf("prompt %d (%q)", sp.prompt, text)
}

// diffFiles are the files that differ between two snapshots, each with both
// texts (capped) and its line counts.
func diffFiles(ctx context.Context, st *checkpoint.Store, before, after string) ([]session.RestoredFile, error) {
	cs, err := st.Changes(ctx, before, after)
	if err != nil || len(cs) == 0 {
		return nil, err
	}
	paths := make([]string, len(cs))
	for i, c := range cs {
		paths[i] = c.Path
	}
	old, err := st.Entries(ctx, before, paths)
	if err != nil {
		return nil, err
	}
	cur, err := st.Entries(ctx, after, paths)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, 2*len(paths))
	for _, p := range paths {
		ids = append(ids, old[p].ID, cur[p].ID)
	}
	blobs, err := st.Blobs(ctx, ids)
	if err != nil {
		return nil, err
	}
	files := make([]session.RestoredFile, 0, len(cs))
	total := 0
	for _, c := range cs {
		f := session.RestoredFile{Path: c.Path, Added: c.Added, Removed: c.Removed}
		o, n := old[c.Path], cur[c.Path]
		if total += len(blobs[o.ID]) + len(blobs[n.ID]); total > maxDiffTotal {
			text := "(not shown: the diff is too long; /diff N shows one change)"
			f.OldText, f.NewText = &text, &text
		} else {
			if o.ID != "" {
				f.OldText = diffText(blobs[o.ID])
			}
			if n.ID != "" {
				f.NewText = diffText(blobs[n.ID])
			}
		}
		files = append(files, f)
	}
	return files, nil
}

func oneLineText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
