package search

import (
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strings"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

var (
	//go:embed ls.md
	lsDescription string
	//go:embed ls_guidance.md
	lsGuidance string
)

// LSParams are the arguments of the ls tool.
type LSParams struct {
	Path   string   `json:"path,omitzero" jsonschema_description:"The directory to list: relative to the current directory, or absolute. Defaults to the current directory."`
	Ignore []string `json:"ignore,omitzero" jsonschema_description:"More entries to leave out, as .gitignore patterns (e.g. node_modules/, *.log, /build)."`
}

// LS returns the ls tool.
func LS() tool.Tool {
	return tool.New(tool.Spec[LSParams, Meta]{
		Name:          "ls",
		Hook:          lsHook,
		Unhook:        lsUnhook,
		Description:   lsDescription,
		Guidance:      lsGuidance,
		ReadOnly:      true,
		Permission:    tool.PermNone,
		Kind:          card.ToolSearch,
		Execute:       lsExecute,
		PresentCall:   presentLSCall,
		PresentResult: presentLSResult,
	})
}

// lsLimit bounds the entries an ls shows; lsMaxWalk bounds those it counts.
const (
	lsLimit   = 200
	lsMaxWalk = 200_000
)

type lsEntry struct {
	rel   string // directories end in "/"
	depth int
}

func lsExecute(ctx context.Context, env tool.Env, p LSParams, _ *Meta) (tool.Result, *Meta, error) {
	t, err := resolve(env, p.Path)
	if err != nil {
		return tool.Errorf("Cannot list %s: %v.", cmp.Or(p.Path, "."), err), nil, nil
	}
	if !t.isDir {
		return tool.Errorf("Cannot list %s: it is a file; read it instead.", t.display("")), nil, nil
	}
	w := newWalker(t.top, t.abs, walkOptions{})
	if len(p.Ignore) > 0 {
		if s := parseIgnore([]byte(strings.Join(p.Ignore, "\n"))); s != nil {
			w.frames = append(w.frames, ignoreFrame{sets: []*ignoreSet{s}})
		}
	}
	var entries []lsEntry
	total, over := 0, false
	err = w.walk(ctx, t.abs, func(d *dirNode, files []string) error {
		if d.rel != "" {
			total++
			entries = append(entries, lsEntry{d.rel + "/", strings.Count(d.rel, "/")})
		}
		for _, f := range files {
			total++
			entries = append(entries, lsEntry{d.join(f), strings.Count(d.rel, "/") + min(len(d.rel), 1)})
		}
		if total >= lsMaxWalk {
			over = true
			return errStop
		}
		return nil
	})
	if err != nil {
		return tool.Errorf("Cannot list %s: %v.", t.display(""), err), nil, nil
	}
	// Breadth first: the shallow entries of a big tree show before the deep ones.
	slices.SortFunc(entries, func(a, b lsEntry) int { return cmp.Or(cmp.Compare(a.depth, b.depth), strings.Compare(a.rel, b.rel)) })
	shown := entries[:min(len(entries), lsLimit)]
	slices.SortFunc(shown, func(a, b lsEntry) int { return strings.Compare(a.rel, b.rel) })

	root := t.display("")
	m := &Meta{Query: root, Dir: t.dir, Total: total, Truncated: len(shown) < total || over}
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(root, "/") + "/\n")
	for _, e := range shown {
		name := e.rel[strings.LastIndexByte(strings.TrimSuffix(e.rel, "/"), '/')+1:]
		b.WriteString(strings.Repeat("  ", e.depth+1) + name + "\n")
		m.Paths = append(m.Paths, t.display(e.rel))
	}
	switch {
	case total == 0:
		b.WriteString("(empty, or every entry is hidden or ignored)")
	case m.Truncated:
		n := plural(total, "entry")
		if over {
			n = fmt.Sprintf("more than %d entries", lsMaxWalk)
		}
		fmt.Fprintf(&b, "\n(Showing %d of %s, the shallowest first. List a subdirectory, or use glob or grep, to see more.)", len(shown), n)
	default:
		fmt.Fprintf(&b, "\n(%s; hidden and ignored entries are not listed.)", plural(total, "entry"))
	}
	return tool.Text(b.String()), m, nil
}
