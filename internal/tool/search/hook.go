package search

import "github.com/dsh-dev/dsh/internal/tool"

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
