package bash

import (
	"github.com/dsh-dev/dsh/internal/shellrule"
	"github.com/dsh-dev/dsh/internal/tool"
)

func (b *bashTool) approval(p params) tool.Approval {
	ap := CommandApproval(p.Command, b.safe)
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
	v := shellrule.Classify(cmd, extraSafe)
	if !v.Rememberable {
		return tool.Approval{Label: v.Reason}
	}
	keys := make([]string, len(v.Keys))
	for i, k := range v.Keys {
		keys[i] = "command:" + k
	}
	return tool.Approval{Keys: keys, Label: v.Label(), Remember: true, Safe: v.Safe}
}
