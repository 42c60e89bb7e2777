package search

import (
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/tool"
)

// The search tools' calls as Claude Code's Grep, Glob and LS give them to
// hooks: paths absolute, Grep's options under its names.
type (
	grepHookInput struct {
		Pattern    string `json:"pattern"`
		Path       string `json:"path,omitempty"`
		Glob       string `json:"glob,omitempty"`
		Type       string `json:"type,omitempty"`
		IgnoreCase bool   `json:"-i,omitzero"`
		Context    int    `json:"-C,omitzero"`
		OutputMode string `json:"output_mode,omitempty"`
		HeadLimit  int    `json:"head_limit,omitzero"`
		Offset     int    `json:"offset,omitzero"`
	}
	globHookInput struct {
		Pattern string `json:"pattern"`
		Path    string `json:"path,omitempty"`
	}
	lsHookInput struct {
		Path string `json:"path"`
	}
)

func grepHook(p GrepParams, cwd string) (string, any) {
	return "Grep", grepHookInput{Pattern: p.Pattern, Path: tool.AbsPath(cwd, p.Path), Glob: p.Glob, Type: p.Type,
		IgnoreCase: p.IgnoreCase, Context: p.Context, OutputMode: p.Output, HeadLimit: p.HeadLimit, Offset: p.Offset}
}

func globHook(p GlobParams, cwd string) (string, any) {
	return "Glob", globHookInput{Pattern: p.Pattern, Path: tool.AbsPath(cwd, p.Path)}
}

func lsHook(p LSParams, cwd string) (string, any) {
	path := p.Path
	if path == "" {
		path = cwd
	}
	return "LS", lsHookInput{Path: tool.AbsPath(cwd, path)}
}

// The search tools' results as Claude Code's Grep and Glob give them to
// PostToolUse hooks.
type (
	grepHookResponse struct {
		Mode      string   `json:"mode"`
		NumFiles  int      `json:"numFiles"`
		Filenames []string `json:"filenames"`
		Content   string   `json:"content,omitempty"`
		NumLines  int      `json:"numLines,omitzero"`
	}
	globHookResponse struct {
		Filenames []string `json:"filenames"`
		NumFiles  int      `json:"numFiles"`
		Truncated bool     `json:"truncated"`
	}
)

func grepUnhook(p GrepParams, input jsontext.Value, cwd string) (GrepParams, error) {
	var in grepHookInput
	if err := json.Unmarshal(input, &in); err != nil {
		return p, err
	}
	return GrepParams{Pattern: in.Pattern, Path: tool.RelPath(cwd, p.Path, in.Path), Glob: in.Glob, Type: in.Type,
		IgnoreCase: in.IgnoreCase, Context: in.Context, Output: in.OutputMode, HeadLimit: in.HeadLimit, Offset: in.Offset}, nil
}

func globUnhook(p GlobParams, input jsontext.Value, cwd string) (GlobParams, error) {
	var in globHookInput
	if err := json.Unmarshal(input, &in); err != nil {
		return p, err
	}
	return GlobParams{Pattern: in.Pattern, Path: tool.RelPath(cwd, p.Path, in.Path)}, nil
}

func lsUnhook(p LSParams, input jsontext.Value, cwd string) (LSParams, error) {
	var in lsHookInput
	if err := json.Unmarshal(input, &in); err != nil {
		return p, err
	}
	return LSParams{Path: tool.RelPath(cwd, p.Path, in.Path), Ignore: p.Ignore}, nil
}

// files are a search's files, absolute.
func files(m *Meta) []string {
	out := []string{}
	if m == nil {
		return out
	}
	for _, f := range m.Files {
		out = append(out, tool.AbsPath(m.Dir, f.Path))
	}
	for _, p := range m.Paths {
		out = append(out, tool.AbsPath(m.Dir, p))
	}
	return out
}

func grepResponse(p GrepParams, r tool.Result, m *Meta, _ string) any {
	mode := p.Output
	if mode == "" {
		mode = "content"
	}
	fs := files(m)
	resp := grepHookResponse{Mode: mode, NumFiles: len(fs), Filenames: fs}
	if mode == "content" {
		resp.Content = r.TextOf()
		resp.NumLines = strings.Count(resp.Content, "\n")
	}
	return resp
}

func globResponse(_ GlobParams, _ tool.Result, m *Meta, _ string) any {
	fs := files(m)
	return globHookResponse{Filenames: fs, NumFiles: len(fs), Truncated: m != nil && m.Truncated}
}
