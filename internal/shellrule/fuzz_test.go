package shellrule

import (
	"slices"
	"strings"
	"testing"
)

// FuzzClassify: Classify never panics, its verdict is consistent (Safe implies
// Rememberable, a refusal has a reason and no keys), and a refused part refuses
// any line it is part of.
func FuzzClassify(f *testing.F) {
	for _, c := range classifyCases {
		f.Add(c.cmd)
	}
	extra := []string{"make test"}
	f.Fuzz(func(t *testing.T, cmd string) {
		v := Classify(cmd, extra)
		checkVerdict(t, cmd, v)
		if again := Classify(cmd, extra); !slices.Equal(again.Keys, v.Keys) || again.Safe != v.Safe || again.Reason != v.Reason {
			t.Fatalf("%q: %+v, then %+v", cmd, v, again)
		}
		// With a harmless command before it, on its own line, the verdict is the same.
		joined := Classify("ls\n"+cmd, extra)
		checkVerdict(t, "ls\n"+cmd, joined)
		switch {
		case v.Rememberable:
			if !joined.Rememberable || joined.Safe != v.Safe {
				t.Fatalf("%q: %+v, but after ls: %+v", cmd, v, joined)
			}
		case v.Reason != "runs no command" && v.Reason != "does not parse as a bash command":
			if joined.Rememberable {
				t.Fatalf("%q refused (%s), but after ls: %+v", cmd, v.Reason, joined)
			}
		}
	})
}

func checkVerdict(t *testing.T, cmd string, v Verdict) {
	t.Helper()
	switch {
	case v.Safe && !v.Rememberable:
		t.Fatalf("%q: safe but not rememberable: %+v", cmd, v)
	case v.Rememberable && (v.Reason != "" || len(v.Keys) == 0):
		t.Fatalf("%q: rememberable with reason %q and keys %q", cmd, v.Reason, v.Keys)
	case !v.Rememberable && (v.Reason == "" || v.Keys != nil || v.Label() != ""):
		t.Fatalf("%q: refused with reason %q and keys %q", cmd, v.Reason, v.Keys)
	}
	for _, k := range v.Keys {
		if k == "" || strings.Contains(k, ",") || strings.ContainsAny(k, "\n\t") {
			t.Fatalf("%q: key %q cannot be shown in a label", cmd, k)
		}
	}
}
