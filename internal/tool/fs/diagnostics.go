package fs

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/lsp"
	"github.com/dsh-dev/dsh/internal/tool"
)

var (
	//go:embed diagnostics.md
	diagnosticsDescription string
	//go:embed diagnostics_guidance.md
	diagnosticsGuidance string
)

// diagnosticsParams are the arguments of the diagnostics tool.
type diagnosticsParams struct {
	Path string `json:"path,omitzero" jsonschema_description:"A file, or a directory whose known problems to list; relative to the current directory, or absolute. Default: the current directory."`
}

// diagMaxListed bounds the problems one diagnostics call lists.
const diagMaxListed = 100

// diagnosticsMeta is what the diagnostics tool persists: the problems found,
// by file (paths relative to Dir), and how many there were in all.
type diagnosticsMeta struct {
	Dir         string            `json:"dir"`
	Diagnostics []card.Diagnostic `json:"diagnostics"`
	Total       int               `json:"total"`
}

// Validate checks what typed JSON can still get wrong.
func (m *diagnosticsMeta) Validate() error {
	if !filepath.IsAbs(m.Dir) || m.Diagnostics == nil || m.Total < len(m.Diagnostics) {
		return errors.New("bad diagnostics meta")
	}
	c := diagnosticsCard("", m)
	if c == nil {
		return errors.New("diagnostics out of order")
	}
	return nil
}

// Diagnostics returns the diagnostics tool.
func Diagnostics() tool.Tool {
	return tool.New(tool.Spec[diagnosticsParams, diagnosticsMeta]{
		Name:        "diagnostics",
		Description: diagnosticsDescription,
		Guidance:    diagnosticsGuidance,
		ReadOnly:    true,
		Permission:  tool.PermNone,
		Kind:        card.ToolSearch,
		Execute:     diagnosticsExecute,
		PresentCall: func(p diagnosticsParams, _ *diagnosticsMeta) card.Call {
			return &card.GenericCall{Title: strings.TrimSpace("Diagnostics " + p.Path)}
		},
		PresentResult: func(p diagnosticsParams, r tool.Result, m *diagnosticsMeta) card.Result {
			if r.IsError || m == nil {
				return nil
			}
			return diagnosticsCard(p.Path, m)
		},
	})
}

func diagnosticsExecute(ctx context.Context, env tool.Env, p diagnosticsParams, _ *diagnosticsMeta) (tool.Result, *diagnosticsMeta, error) {
	ws := env.Session.Workspace
	mgr := lsp.From(env.Session)
	path := p.Path
	if path == "" {
		path = "."
	}
	loc, err := ws.Locate(path)
	if err != nil {
		return tool.Errorf("Cannot check %s: %v.", path, err), nil, nil
	}
	fi, err := loc.Lstat()
	if err != nil {
		return tool.Errorf("Cannot check %s: %v.", path, err), nil, nil
	}
	dir := ws.Cwd()
	m := &diagnosticsMeta{Dir: dir, Diagnostics: []card.Diagnostic{}}
	var head string
	if fi.IsDir() {
		all := mgr.Known(loc.Real())
		m.Total = len(all)
		for _, d := range all[:min(len(all), diagMaxListed)] {
			d.Path = relTo(dir, d.Path)
			m.Diagnostics = append(m.Diagnostics, d)
		}
		head = fmt.Sprintf("%d known problem(s) under %s (files the language servers have seen in this session).", m.Total, path)
	} else {
		if !mgr.Checks(loc.Real()) {
			return tool.Text(fmt.Sprintf("No language server checks %s: none is installed or configured for its language.", path)), nil, nil
		}
		ok, note := mgr.Permit(ctx, loc.Real(), serverAsk(env))
		if !ok {
			return tool.Text(cmp.Or(note, fmt.Sprintf("No diagnostics for %s: language servers do not run in this folder.", path))), nil, nil
		}
		head = note
		f, err := loc.Open()
		if err != nil {
			return tool.Errorf("Cannot check %s: %v.", path, err), nil, nil
		}
		text, err := io.ReadAll(io.LimitReader(f, diagMaxBytes+1))
		_ = f.Close()
		if err != nil || len(text) > diagMaxBytes {
			return tool.Errorf("Cannot check %s: too large or unreadable.", path), nil, nil
		}
		r := mgr.Check(ctx, loc.Real(), text)
		if r == nil { // the session is closing
			return tool.Text(fmt.Sprintf("No diagnostics for %s: its language server is not running.", path)), nil, nil
		}
		if r.Failed != "" || r.Pending {
			return tool.Text(strings.TrimSpace(head + "\n" + diagnosticsText(path, r, mgr.Wait()))), nil, nil
		}
		m.Total = len(r.Diagnostics) + r.More
		m.Diagnostics = diagnosticsAt(relTo(dir, loc.Real()), r.Diagnostics)
		head = strings.TrimSpace(head + "\n" + fmt.Sprintf("%s reports %d problem(s) in %s.", r.Server, m.Total, path))
	}
	var b strings.Builder
	b.WriteString(head)
	for _, d := range m.Diagnostics {
		fmt.Fprintf(&b, "\n%s:%d:%d: %s: %s", d.Path, d.Line, d.Column, d.Severity, d.Message)
		if d.Source != "" {
			fmt.Fprintf(&b, " [%s]", d.Source)
		}
	}
	if n := m.Total - len(m.Diagnostics); n > 0 {
		fmt.Fprintf(&b, "\n… and %d more.", n)
	}
	return tool.Text(b.String()), m, nil
}

// relTo names abs relative to dir when it is inside it.
func relTo(dir, abs string) string {
	if rel, err := filepath.Rel(dir, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return rel
	}
	return abs
}
