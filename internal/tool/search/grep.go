package search

import (
	"context"
	_ "embed"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

var (
	//go:embed grep.md
	grepDescription string
	//go:embed grep_guidance.md
	grepGuidance string
)

// GrepParams are the arguments of the grep tool.
type GrepParams struct {
	Pattern    string `json:"pattern" jsonschema_description:"The regular expression to search for, in Go RE2 syntax (no lookaround or backreferences). Matched against each line."`
	Path       string `json:"path,omitzero" jsonschema_description:"The file or directory to search: relative to the current directory, or absolute. Defaults to the current directory."`
	Glob       string `json:"glob,omitzero" jsonschema_description:"Only search files matching this glob (e.g. *.go, **/*.{ts,tsx}, internal/**); a glob without a slash matches file names. Start it with ! to exclude instead."`
	Type       string `json:"type,omitzero" jsonschema_description:"Only search files of this type: go, py, js, ts, rust, c, cpp, java, rb, sh, md, json, yaml, toml, html, css, sql, proto."`
	IgnoreCase bool   `json:"ignore_case,omitzero" jsonschema_description:"Match case-insensitively."`
	Context    int    `json:"context,omitzero" jsonschema:"minimum=0,maximum=20" jsonschema_description:"Lines of context to show before and after each match (content output only)."`
	Output     string `json:"output,omitzero" jsonschema:"enum=content,enum=files_with_matches,enum=count" jsonschema_description:"content (default): matching lines grouped by file; files_with_matches: the paths of matching files; count: matching lines per file."`
	HeadLimit  int    `json:"head_limit,omitzero" jsonschema:"minimum=1,maximum=2000" jsonschema_description:"The most entries to show (lines for content, files otherwise). Defaults to 100."`
	Offset     int    `json:"offset,omitzero" jsonschema:"minimum=0" jsonschema_description:"Entries to skip before showing head_limit of them: to continue a long result."`
}

// Grep returns the grep tool.
func Grep() tool.Tool {
	return tool.New(tool.Spec[GrepParams, Meta]{
		Name:          "grep",
		Hook:          grepHook,
		Unhook:        grepUnhook,
		HookResponse:  grepResponse,
		Description:   grepDescription,
		Guidance:      grepGuidance,
		ReadOnly:      true,
		Permission:    tool.PermNone,
		Kind:          card.ToolSearch,
		Execute:       grepExecute,
		PresentCall:   presentGrepCall,
		PresentResult: presentGrepResult,
	})
}

// The output modes.
const (
	outContent = "content"
	outFiles   = "files_with_matches"
	outCount   = "count"
)

// fileTypes maps a type name to the globs of its files, matched against names.
var fileTypes = map[string][]string{
	"go":    {"*.go"},
	"py":    {"*.py", "*.pyi"},
	"js":    {"*.js", "*.mjs", "*.cjs", "*.jsx"},
	"ts":    {"*.ts", "*.mts", "*.cts", "*.tsx"},
	"rust":  {"*.rs"},
	"c":     {"*.c", "*.h"},
	"cpp":   {"*.cc", "*.cpp", "*.cxx", "*.hh", "*.hpp", "*.hxx", "*.h"},
	"java":  {"*.java"},
	"rb":    {"*.rb"},
	"sh":    {"*.sh", "*.bash", "*.zsh"},
	"md":    {"*.md", "*.markdown"},
	"json":  {"*.json", "*.jsonc"},
	"yaml":  {"*.yaml", "*.yml"},
	"toml":  {"*.toml"},
	"html":  {"*.html", "*.htm"},
	"css":   {"*.css", "*.scss", "*.sass"},
	"sql":   {"*.sql"},
	"proto": {"*.proto"},
}

// grepQuery is a validated grep call.
type grepQuery struct {
	p       GrepParams
	m       *matcher
	mode    string
	limit   int
	context int
	keep    func(rel, name string) bool // the file filter of glob and type; nil keeps all
	skipDir func(rel, name string) bool // an excluding glob prunes directories too
}

func newGrepQuery(p GrepParams) (*grepQuery, error) {
	q := &grepQuery{p: p, mode: p.Output, limit: p.HeadLimit, context: p.Context}
	if q.mode == "" {
		q.mode = outContent
	}
	if q.limit <= 0 {
		q.limit = defaultLimit
	}
	q.limit = min(q.limit, maxLimit)
	q.context = min(max(q.context, 0), 20)
	m, err := newMatcher(p.Pattern, p.IgnoreCase)
	if err != nil {
		return nil, fmt.Errorf("invalid pattern (Go RE2 syntax): %w", err)
	}
	q.m = m
	var filters []func(rel, name string) bool
	if p.Type != "" {
		globs, ok := fileTypes[p.Type]
		if !ok {
			return nil, fmt.Errorf("unknown type %q; known types: %s", p.Type, strings.Join(typeNames(), ", "))
		}
		filters = append(filters, func(_, name string) bool {
			for _, g := range globs {
				if ok, _ := path.Match(g, name); ok {
					return true
				}
			}
			return false
		})
	}
	if p.Glob != "" {
		g, exclude := strings.CutPrefix(p.Glob, "!")
		if !doublestar.ValidatePattern(g) {
			return nil, fmt.Errorf("invalid glob %q", p.Glob)
		}
		match := func(rel, name string) bool {
			subject := name
			if strings.Contains(g, "/") {
				subject = rel
			}
			ok, _ := doublestar.Match(g, subject)
			return ok
		}
		if exclude {
			filters = append(filters, func(rel, name string) bool { return !match(rel, name) })
			q.skipDir = match
		} else {
			filters = append(filters, match)
		}
	}
	if len(filters) > 0 {
		q.keep = func(rel, name string) bool {
			for _, f := range filters {
				if !f(rel, name) {
					return false
				}
			}
			return true
		}
	}
	return q, nil
}

func typeNames() []string {
	names := make([]string, 0, len(fileTypes))
	for n := range fileTypes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func grepExecute(ctx context.Context, env tool.Env, p GrepParams, _ *Meta) (tool.Result, *Meta, error) {
	if p.Pattern == "" {
		return tool.Errorf("grep needs a pattern."), nil, nil
	}
	q, err := newGrepQuery(p)
	if err != nil {
		return tool.Errorf("Cannot grep: %v.", err), nil, nil
	}
	t, err := resolve(env, p.Path)
	if err != nil {
		return tool.Errorf("Cannot grep %s: %v.", p.Path, err), nil, nil
	}
	res, err := q.run(ctx, t)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Errorf("grep was cancelled."), nil, nil
		}
		return tool.Errorf("Cannot grep %s: %v.", t.display(""), err), nil, nil
	}
	if q.context > 0 && q.mode == outContent {
		addContext(t, res.files, q.context)
	}
	text, m := q.render(t, res)
	return tool.Text(text), m, nil
}

// render turns what the scan kept into the model's text and the card's meta: the
// entries shown, cut again if the text outgrows maxOutput, and a footer that says
// what is missing and how to get it.
func (q *grepQuery) render(t target, res grepResult) (string, *Meta) {
	m := &Meta{Query: q.p.Pattern, Dir: t.dir, Total: res.total}
	var b strings.Builder
	shown, capped := 0, false
	fits := func(n int) bool {
		capped = capped || b.Len()+n > maxOutput
		return !capped
	}
	for _, f := range res.files {
		if capped {
			break
		}
		name := t.display(f.rel)
		switch q.mode {
		case outFiles:
			if fits(len(name) + 1) {
				b.WriteString(name + "\n")
				m.Paths = append(m.Paths, name)
				shown++
			}
		case outCount:
			line := name + ":" + strconv.Itoa(f.count) + "\n"
			if fits(len(line)) {
				b.WriteString(line)
				m.Files = append(m.Files, card.SearchFile{Path: name, Count: f.count})
				shown++
			}
		default:
			sf, text, n := q.fileBlock(name, f, b.Len() > 0, maxOutput-b.Len())
			if len(sf.Matches) > 0 {
				b.WriteString(text)
				m.Files = append(m.Files, sf)
			}
			shown += n
			capped = capped || n < countHits(f.lines)
		}
	}
	unit, of := "file", res.nfiles // what head_limit and offset count
	if q.mode == outContent {
		unit, of = "matching line", res.total
	}
	m.Truncated = shown < of
	switch {
	case res.total == 0:
		b.WriteString(noMatches(q, t, res))
	case !m.Truncated && q.mode == outFiles:
		fmt.Fprintf(&b, "\n(%s.)", plural(res.nfiles, "file"))
	case !m.Truncated:
		fmt.Fprintf(&b, "\n(%s in %s.)", plural(res.total, "matching line"), plural(res.nfiles, "file"))
	default:
		b.WriteString("\n(")
		if capped {
			fmt.Fprintf(&b, "Output capped at %d KiB. ", maxOutput>>10)
		}
		from := q.p.Offset
		switch {
		case shown == 0:
			fmt.Fprintf(&b, "Nothing shown at offset %d: there are %s", from, plural(of, unit))
		case from > 0:
			fmt.Fprintf(&b, "Showing %ss %d-%d of %d", unit, from+1, from+shown, of)
		default:
			fmt.Fprintf(&b, "Showing %d of %s", shown, plural(of, unit))
		}
		if q.mode == outContent {
			fmt.Fprintf(&b, " in %s", plural(res.nfiles, "file"))
		}
		b.WriteString(". Narrow the search with path, glob, type or a more specific pattern")
		if from+shown < of {
			fmt.Fprintf(&b, ", or continue with offset=%d", from+shown)
		}
		b.WriteString(".)")
	}
	return b.String(), m
}

// fileBlock renders one file's lines as ripgrep's --heading output does
// ("12:match", "13-context", "--" between groups) within room bytes; n is the
// matching lines it holds.
func (q *grepQuery) fileBlock(name string, f fileHits, sep bool, room int) (card.SearchFile, string, int) {
	var b strings.Builder
	if sep {
		b.WriteByte('\n')
	}
	b.WriteString(name + "\n")
	sf := card.SearchFile{Path: name, Count: f.count}
	n, prev := 0, 0
	for _, l := range f.lines {
		if prev > 0 && l.line > prev+1 {
			b.WriteString("--\n")
		}
		mark := "-"
		if l.ranges != nil {
			mark = ":"
		}
		entry := strconv.Itoa(l.line) + mark + l.text + "\n"
		if b.Len()+len(entry) > room {
			break
		}
		b.WriteString(entry)
		sf.Matches = append(sf.Matches, card.SearchMatch{Line: l.line, Text: l.text, Ranges: l.ranges})
		if l.ranges != nil {
			n++
		}
		prev = l.line
	}
	return sf, b.String(), n
}

func countHits(lines []lineHit) int {
	n := 0
	for _, l := range lines {
		if l.ranges != nil {
			n++
		}
	}
	return n
}

func noMatches(q *grepQuery, t target, res grepResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "No matches for %q in %s", q.p.Pattern, t.display(""))
	if t.isDir {
		fmt.Fprintf(&b, " (%s searched; hidden, binary and ignored files are skipped)", plural(res.searched, "file"))
	}
	b.WriteString(".")
	return b.String()
}

// addContext puts the n lines around each shown match in with them, reading each
// shown file again: only these few files, and they are in the page cache.
func addContext(t target, files []fileHits, n int) {
	for i := range files {
		f := &files[i]
		if len(f.lines) == 0 {
			continue
		}
		want := map[int]bool{}
		last := 0
		for _, l := range f.lines {
			for ln := max(l.line-n, 1); ln <= l.line+n; ln++ {
				want[ln] = true
			}
			last = max(last, l.line+n)
		}
		texts := t.readLines(f.rel, want, last)
		var out []lineHit
		hits := f.lines
		for ln := 1; ln <= last; ln++ {
			switch {
			case len(hits) > 0 && hits[0].line == ln:
				out = append(out, hits[0])
				hits = hits[1:]
			case want[ln]:
				if s, ok := texts[ln]; ok {
					out = append(out, lineHit{line: ln, text: s})
				}
			}
		}
		f.lines = out
	}
}
