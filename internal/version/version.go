// Package version says which dsh this is: the version stamped at build time, else
// the main module's version from the build info, else "(devel)" with the VCS
// revision when the build recorded one.
package version

import (
	"runtime/debug"
	"sync"
)

// Version is set at build time:
//
//	go build -ldflags "-X github.com/dsh-dev/dsh/internal/version.Version=v1.2.3" ./cmd/dsh
var Version string

// String returns dsh's version. It is resolved once: every session's settings
// ask, and the build info is parsed anew on each read of it.
func String() string { return resolved() }

var resolved = sync.OnceValue(func() string { return resolve(Version, debug.ReadBuildInfo) })

// resolve is String with its inputs injected, for tests.
func resolve(stamped string, read func() (*debug.BuildInfo, bool)) string {
	if stamped != "" {
		return stamped
	}
	info, ok := read()
	if !ok || info == nil {
		return "(devel)"
	}
	// go install module@version records the module version; builds in a work
	// tree record "(devel)" or, since Go 1.24, a VCS pseudo-version.
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "(devel)"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v := "(devel)+" + rev
	if dirty {
		v += ".dirty"
	}
	return v
}
