package version

import (
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	info := func(v string, settings ...string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/dsh-dev/dsh", Version: v}}
			for i := 0; i+1 < len(settings); i += 2 {
				bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
			}
			return bi, true
		}
	}
	const rev = "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		name, stamped string
		read          func() (*debug.BuildInfo, bool)
		want          string
	}{
		{"stamped wins", "v9.9.9", info("v1.0.0"), "v9.9.9"},
		{"module version", "", info("v1.2.3"), "v1.2.3"},
		{"pseudo-version", "", info("v0.0.0-20260101000000-0123456789ab"), "v0.0.0-20260101000000-0123456789ab"},
		{"devel with revision", "", info("(devel)", "vcs.revision", rev, "vcs.modified", "false"), "(devel)+0123456789ab"},
		{"devel dirty", "", info("(devel)", "vcs.revision", rev, "vcs.modified", "true"), "(devel)+0123456789ab.dirty"},
		{"devel short revision", "", info("", "vcs.revision", "abc"), "(devel)+abc"},
		{"devel without vcs", "", info("(devel)"), "(devel)"},
		{"no build info", "", func() (*debug.BuildInfo, bool) { return nil, false }, "(devel)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := resolve(tc.stamped, tc.read); got != tc.want {
				t.Errorf("resolve = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestLdflags builds a real binary and stamps it the way a release would.
func TestLdflags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := filepath.Join(t.TempDir(), "printversion")
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"-ldflags", "-X github.com/dsh-dev/dsh/internal/version.Version=v7.8.9-test"}, "v7.8.9-test"},
		// -buildvcs=false: nothing recorded, so the last fallback shows.
		{[]string{"-buildvcs=false"}, "(devel)"},
	} {
		args := append([]string{"build", "-o", bin}, tc.flags...)
		args = append(args, "./testdata/printversion")
		if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
			t.Fatalf("go %v: %v\n%s", args, err, out)
		}
		out, err := exec.Command(bin).Output()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(out)); got != tc.want {
			t.Errorf("built with %v: got %q, want %q", tc.flags, got, tc.want)
		}
	}
}
