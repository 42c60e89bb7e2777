package bash

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// A known-safe command runs without anyone seeing it, so it must not run what
// a hostile repository configured: git's fsmonitor, hooks, external diff,
// textconv and filter drivers, and pager; an embedded bare repository; the go
// command's module proxy and toolchain downloads. guardEnv is what such a
// command's environment gets: git's -c options as GIT_CONFIG_COUNT/KEY/VALUE
// (which the command cannot see or undo, since it is approved as written), and
// the go command kept off the network.

// fixedGuard are the settings every safe command gets.
var fixedGuard = [][2]string{
	{"core.fsmonitor", "false"},
	{"core.hooksPath", "/dev/null"},
	{"core.pager", "cat"},
	{"safe.bareRepository", "explicit"},
	{"log.showSignature", "false"},
}

// driverKeys are the program-naming keys a repository can set per driver or
// alone, which guardEnv finds in the repository's own config (local scope):
// the user's global ones are the user's choice and stay.
var driverKeys = []string{"diff.external", ".textconv", ".command", ".clean", ".smudge", ".process"}

// guardEnv returns env with the guard added, for a safe command run in dir.
// Only a command that may run git (runsGit) has the repository's config read
// for drivers to switch off: that read is a git process, which `ls` need not pay.
func guardEnv(dir string, env []string, runsGit bool) []string {
	pairs := append([][2]string(nil), fixedGuard...)
	var local []string
	if runsGit {
		local = localProgramKeys(dir, env, pairs)
	}
	for _, key := range local {
		value := "false" // fails closed: git reports the driver failed
		if strings.HasSuffix(key, ".textconv") {
			value = "cat" // the file as it is, which is what no textconv shows
		}
		pairs = append(pairs, [2]string{key, value})
	}
	out := append([]string(nil), env...)
	out = append(out, configEnv(pairs)...)
	return append(out, "GIT_NO_LAZY_FETCH=1", "GOPROXY=off", "GOTOOLCHAIN=local")
}

func configEnv(pairs [][2]string) []string {
	out := []string{fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(pairs))}
	for i, p := range pairs {
		out = append(out, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, p[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, p[1]))
	}
	return out
}

// localProgramKeys lists the program-naming keys the repository at dir sets in
// its own config files (not the user's global or system ones). Reading config
// runs nothing; with the fixed guard an embedded bare repository is not found.
func localProgramKeys(dir string, env []string, guard [][2]string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "config", "--show-scope", "--name-only", "--get-regexp",
		`^(diff\.external|(diff|filter)\..*\.(textconv|command|clean|smudge|process))$`)
	cmd.Dir = dir
	cmd.Env = append(append([]string(nil), env...), configEnv(guard)...)
	out, err := cmd.Output()
	if err != nil && len(out) == 0 {
		return nil // no repository, no such key, or no git: nothing to guard
	}
	var keys []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		scope, key, ok := strings.Cut(sc.Text(), "\t")
		if !ok || scope == "global" || scope == "system" || scope == "command" {
			continue
		}
		for _, k := range driverKeys {
			if strings.HasSuffix(key, k) || key == k {
				keys = append(keys, key)
				break
			}
		}
	}
	return keys
}
