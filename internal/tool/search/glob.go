package search

import (
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"golang.org/x/sys/unix"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

var (
	//go:embed glob.md
	globDescription string
	//go:embed glob_guidance.md
	globGuidance string
)

// GlobParams are the arguments of the glob tool.
type GlobParams struct {
	Pattern string `json:"pattern" jsonschema_description:"The glob to match file paths against, relative to path: * and ? within a name, ** across directories, [abc] and {a,b} (e.g. **/*_test.go, src/**/*.{ts,tsx})."`
	Path    string `json:"path,omitzero" jsonschema_description:"The directory to search in: relative to the current directory, or absolute. Defaults to the current directory."`
}

// Glob returns the glob tool.
func Glob() tool.Tool {
	return tool.New(tool.Spec[GlobParams, Meta]{
		Name:          "glob",
		Hook:          globHook,
		Unhook:        globUnhook,
		HookResponse:  globResponse,
		Description:   globDescription,
		Guidance:      globGuidance,
		ReadOnly:      true,
		Permission:    tool.PermNone,
		Kind:          card.ToolSearch,
		Execute:       globExecute,
		PresentCall:   presentGlobCall,
		PresentResult: presentGlobResult,
	})
}

type globHit struct {
	rel   string
	mtime int64 // nanoseconds
}

func globExecute(ctx context.Context, env tool.Env, p GlobParams, _ *Meta) (tool.Result, *Meta, error) {
	pattern := filepath.ToSlash(p.Pattern)
	dir := p.Path
	if strings.HasPrefix(pattern, "/") { // an absolute pattern names its directory itself
		dir, pattern = doublestar.SplitPattern(pattern)
	}
	if pattern == "" || !doublestar.ValidatePattern(pattern) {
		return tool.Errorf("Invalid glob %q.", p.Pattern), nil, nil
	}
	// Literal leading directories need not be walked from above.
	if base, rest := doublestar.SplitPattern(pattern); base != "." && rest != "" && !strings.ContainsAny(base, `*?[{\`) {
		dir, pattern = filepath.Join(cmp.Or(dir, "."), base), rest
	}
	t, err := resolve(env, dir)
	if err != nil {
		return tool.Errorf("Cannot glob in %s: %v.", cmp.Or(dir, "."), err), nil, nil
	}
	if !t.isDir {
		return tool.Errorf("Cannot glob in %s: it is a file, not a directory.", t.display("")), nil, nil
	}
	// A pattern that names hidden entries (.github/**) walks them too.
	hidden := strings.HasPrefix(pattern, ".") || strings.Contains(pattern, "/.")
	var hits []globHit
	var st unix.Stat_t
	w := newWalker(t.top, t.abs, walkOptions{hidden: hidden})
	err = w.walk(ctx, t.abs, func(d *dirNode, files []string) error {
		for _, name := range files {
			rel := d.join(name)
			if ok, _ := doublestar.Match(pattern, rel); !ok {
				continue
			}
			h := globHit{rel: rel}
			if unix.Fstatat(d.fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
				h.mtime = st.Mtim.Nano()
			}
			hits = append(hits, h)
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return tool.Errorf("glob was cancelled."), nil, nil
		}
		return tool.Errorf("Cannot glob in %s: %v.", t.display(""), err), nil, nil
	}
	slices.SortFunc(hits, func(a, b globHit) int {
		return cmp.Or(cmp.Compare(b.mtime, a.mtime), strings.Compare(a.rel, b.rel))
	})
	m := &Meta{Query: p.Pattern, Dir: t.dir, Total: len(hits)}
	var b strings.Builder
	for _, h := range hits[:min(len(hits), defaultLimit)] {
		name := t.display(h.rel)
		if b.Len()+len(name)+1 > maxOutput {
			break
		}
		b.WriteString(name + "\n")
		m.Paths = append(m.Paths, name)
	}
	m.Truncated = len(m.Paths) < len(hits)
	switch {
	case len(hits) == 0:
		fmt.Fprintf(&b, "No files match %q in %s (hidden and ignored files are skipped).", p.Pattern, t.display(""))
	case m.Truncated:
		fmt.Fprintf(&b, "\n(Showing the %d most recently modified of %s. Narrow the pattern or the path to see the rest.)",
			len(m.Paths), plural(len(hits), "file"))
	default:
		fmt.Fprintf(&b, "\n(%s, most recently modified first.)", plural(len(hits), "file"))
	}
	return tool.Text(b.String()), m, nil
}
