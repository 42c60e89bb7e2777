package shellrule

import "testing"

// TestSafeStaysInside attacks the safe table as issue 19 did: known read-only
// commands whose arguments reach secrets outside the workspace, or the network.
// Each is still rememberable (asked once, "always" possible) but never safe.
func TestSafeStaysInside(t *testing.T) {
	for _, cmd := range []string{
		"cat ~/.ssh/id_rsa",
		"cat /home/u/.aws/credentials",
		"head ~/.bashrc",
		"git diff --no-index /dev/null ~/.ssh/id_rsa",
		"grep -a KEY /proc/1/environ",
		"grep -r KEY /proc/self/environ",
		"cat /proc/1234/mem",
		"cat ../../etc/shadow",
		"cat docs/../../x",
		"rg --files=/etc x",
		"git -C /tmp/other status",
		"ls ..",
		"go list -m example.com/SECRET@latest",
		"go list -m -json example.com/x@v1.0.0",
	} {
		if v := Classify(cmd, nil); v.Safe {
			t.Errorf("%q is safe", cmd)
		}
	}
	for _, cmd := range []string{"cat README.md", "grep -rn x ./internal", "git diff --no-index /dev/null new.txt", "ls -la", "go list ./..."} {
		if v := Classify(cmd, nil); !v.Safe {
			t.Errorf("%q is not safe (%+v)", cmd, v)
		}
	}
}
