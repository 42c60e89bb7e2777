package agent

import (
	"encoding/json"
	"path/filepath"
	"slices"

	"github.com/dsh-dev/dsh/internal/rules"
	"github.com/dsh-dev/dsh/internal/tool"
)

// ruleCall says what c will do, for the permission rules: its command, the
// real paths it reads or changes (links followed, as the tool will find
// them), the URL it fetches, the agent it starts.
func (a *Agent) ruleCall(c call, ap tool.Approval) rules.Call {
	var p struct {
		Command string `json:"command"`
		Path    string `json:"path"`
		URL     string `json:"url"`
		Agent   string `json:"subagent_type"`
	}
	_ = json.Unmarshal(c.args, &p) // a call whose arguments do not parse fails in its tool
	rc := rules.Call{Tool: c.name, Command: p.Command, URL: p.URL, Agent: p.Agent}
	paths := slices.Clone(ap.Paths)
	if p.Path != "" && !slices.Contains(paths, p.Path) {
		paths = append(paths, p.Path)
	}
	if len(paths) == 0 && (c.name == "grep" || c.name == "glob" || c.name == "ls") {
		paths = []string{"."} // they default to the working directory
	}
	for _, path := range paths {
		rc.Paths = append(rc.Paths, a.realPath(path))
	}
	return rc
}

// realPath is where path leads, as the tools resolve it.
func (a *Agent) realPath(path string) string {
	if a.c.Tools == nil || a.c.Tools.Workspace == nil {
		return filepath.Clean(path)
	}
	ws := a.c.Tools.Workspace
	if f, err := ws.Locate(path); err == nil {
		return f.Real()
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(ws.Cwd(), path)
	}
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return filepath.Clean(path)
}

// ruleGate is what the permission rules say of c: a denial (the result the
// model reads, naming the rule), or "ask" or "allow" to combine with what
// the hooks said, as strong as theirs.
func (a *Agent) ruleGate(c call, ap tool.Approval) (denied *tool.Result, say string) {
	if a.c.Rules == nil || c.tool == nil {
		return nil, ""
	}
	v := a.c.Rules().Decide(a.ruleCall(c, ap))
	switch {
	case v.Unsure:
		return nil, "ask"
	case !v.Matched:
		return nil, ""
	case v.Effect == rules.Deny:
		r := tool.Errorf("Denied by the permission rule %q of %s: not run.", v.Rule.Text, v.Rule.Source)
		return &r, ""
	case v.Effect == rules.Ask:
		return nil, "ask"
	}
	return nil, "allow"
}

// stronger is the stronger of two permission verdicts: ask over allow over
// none.
func stronger(a, b string) string {
	switch {
	case a == "ask" || b == "ask":
		return "ask"
	case a == "allow" || b == "allow":
		return "allow"
	}
	return ""
}
