package agent

import (
	_ "embed"
	"path/filepath"
)

// planModeText is the system prompt's section while the plan mode is in
// force.
//
//go:embed plan_mode.md
var planModeText string

// systemPrompt is the system prompt in force: the one the session's header
// recorded, so a reloaded session sends the prompt the live one sent, and in
// the plan mode the section that says how to plan (the mode is folded from the
// log, so a reloaded session says it when the live one did).
func (a *Agent) systemPrompt() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.mode == ModePlan {
		return a.system + "\n\n" + planModeText
	}
	return a.system
}

// movedCwd is the working directory a call left behind (relative to the root),
// for its result record, or "" when it is the one last logged.
func (a *Agent) movedCwd() string {
	if a.c.Tools == nil || a.c.Tools.Workspace == nil {
		return ""
	}
	ws := a.c.Tools.Workspace
	cwd := ws.Rel(ws.Cwd())
	a.mu.Lock()
	defer a.mu.Unlock()
	if cwd == a.cwd {
		return ""
	}
	return cwd
}

// restoreCwd moves the workspace to a logged working directory: live it is
// there already; reloaded, the next command runs where the live one would. A
// directory that is gone, or outside a workspace that now refuses it, leaves
// the workspace where it is (the result a command gets says where it ran).
func (a *Agent) restoreCwd(rel string) {
	if a.c.Tools == nil || a.c.Tools.Workspace == nil {
		return
	}
	ws := a.c.Tools.Workspace
	dir := rel
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(ws.Root(), rel)
	}
	if dir != ws.Cwd() {
		_ = ws.SetCwd(dir)
	}
}
