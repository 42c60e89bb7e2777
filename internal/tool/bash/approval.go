package bash

import (
	"github.com/dsh-dev/dsh/internal/shellrule"
	"github.com/dsh-dev/dsh/internal/tool"
)

func (b *bashTool) approval(p params) tool.Approval {
	ap := approvalOf(b.classify(p.Command))
	ap.Confined = b.sandbox.Enabled() // the auto mode exists only then
	return ap
}

// CommandApproval is what the permission step knows about a command line, by the
// one strict rule of package shellrule: known-safe read-only commands run without
// asking; otherwise "always allow" remembers one key per command the line would
// run (approving `ls` never covers `ls; rm -rf ~`), and only for lines whose every
// part is a plain program with literal arguments. extraSafe are the user's
// additions to the safe table.
func CommandApproval(cmd string, extraSafe []string) tool.Approval {
	return approvalOf(shellrule.Classify(cmd, extraSafe))
}

func approvalOf(v shellrule.Verdict) tool.Approval {
	if !v.Rememberable {
		return tool.Approval{Label: v.Reason}
	}
	keys := make([]string, len(v.Keys))
	for i, k := range v.Keys {
		keys[i] = "command:" + k
	}
	return tool.Approval{Keys: keys, Label: v.Label(), Remember: true, Safe: v.Safe}
}

// classify is shellrule.Classify with the user's safe commands, kept for the
// last command: the permission step and the run ask about the same one, and
// parsing it is most of what the tool costs before the command starts.
func (b *bashTool) classify(cmd string) shellrule.Verdict {
	b.classMu.Lock()
	defer b.classMu.Unlock()
	if b.classified.cmd != cmd || !b.classified.ok {
		b.classified.cmd, b.classified.v, b.classified.ok = cmd, shellrule.Classify(cmd, b.safe), true
	}
	return b.classified.v
}
