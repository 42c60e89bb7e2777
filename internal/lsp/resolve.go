package lsp

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/dsh-dev/dsh/internal/secretenv"
)

// What runs must not be the repository's to choose. A server starts in "/",
// not the workspace: a toolchain manager reads its pin from the directory it
// runs in (rustup's rust-toolchain.toml, whose `path = "/proc/self/cwd/tc"`
// names a toolchain inside the repository; asdf's and mise's files). Its
// command is looked up, and its PATH kept, without the directories inside the
// workspace; a rustup proxy — the server, or the cargo it runs in the
// workspace — is held to the user's own toolchain by RUSTUP_TOOLCHAIN.

// serverDir is where servers run: nothing there is the repository's.
const serverDir = "/"

// serverEnv is the servers' environment, made of env for the workspace at
// root: credential-looking variables removed (a server sees what a shell
// command would), PATH without the workspace, and the user's rustup
// toolchain pinned unless the user pinned one.
func serverEnv(env []string, root string) []string {
	get := getenvOf(env)
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		switch {
		case secretenv.Secret(name, value):
		case name == "RUSTUP_TOOLCHAIN" && value == "": // set below: the first of two would win
		case name == "PATH":
			out = append(out, "PATH="+outsidePath(value, root))
		default:
			out = append(out, kv)
		}
	}
	if get("RUSTUP_TOOLCHAIN") == "" {
		out = append(out, "RUSTUP_TOOLCHAIN="+rustToolchain(get, root))
	}
	return out
}

// getenvOf looks a variable up in env as the process given env would.
func getenvOf(env []string) func(string) string {
	return func(name string) string {
		for _, kv := range slices.Backward(env) {
			if v, ok := strings.CutPrefix(kv, name+"="); ok {
				return v
			}
		}
		return ""
	}
}

// outsidePath is the PATH list without its relative entries and those inside
// root.
func outsidePath(path, root string) string {
	var keep []string
	for dir := range strings.SplitSeq(path, string(os.PathListSeparator)) {
		if filepath.IsAbs(dir) && !inside(dir, root) {
			keep = append(keep, dir)
		}
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

// inside reports whether path is root or under it, also once symlinks are
// resolved.
func inside(path, root string) bool {
	if root == "" {
		return false
	}
	under := func(p, r string) bool {
		rel, err := filepath.Rel(r, p)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
	}
	if under(filepath.Clean(path), root) {
		return true
	}
	real, err := filepath.EvalSymlinks(path)
	rroot, rerr := filepath.EvalSymlinks(root)
	return err == nil && rerr == nil && under(real, rroot)
}

// lookPath finds a server's command the way a shell would, in the PATH of
// env, but never in the workspace at root. A command naming a path is taken
// as it is when absolute; a relative one would be resolved against the
// workspace, and is not.
func lookPath(name string, env []string, root string) (string, bool) {
	if strings.Contains(name, "/") {
		return name, filepath.IsAbs(name) && executable(name)
	}
	for dir := range strings.SplitSeq(outsidePath(getenvOf(env)("PATH"), root), string(os.PathListSeparator)) {
		if p := filepath.Join(dir, name); executable(p) {
			return p, true
		}
	}
	return "", false
}

func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// rustToolchain is the toolchain rustup would pick for root were it not for
// the repository's files: the user's override of root (or a folder above it),
// else the user's default, else "stable".
func rustToolchain(getenv func(string) string, root string) string {
	home := getenv("RUSTUP_HOME")
	if !filepath.IsAbs(home) {
		h := getenv("HOME")
		if !filepath.IsAbs(h) {
			return "stable"
		}
		home = filepath.Join(h, ".rustup")
	}
	b, err := os.ReadFile(filepath.Join(home, "settings.toml"))
	if err != nil || len(b) > 1<<20 {
		return "stable"
	}
	var s struct {
		Default   string            `toml:"default_toolchain"`
		Overrides map[string]string `toml:"overrides"`
	}
	if toml.Unmarshal(b, &s) != nil {
		return "stable"
	}
	for dir := root; dir != "" && filepath.IsAbs(dir); dir = filepath.Dir(dir) {
		if tc := s.Overrides[dir]; tc != "" {
			return tc
		}
		if dir == "/" {
			break
		}
	}
	if s.Default != "" {
		return s.Default
	}
	return "stable"
}

// ownTsserver is the tsserver.js that the typescript-language-server at bin
// would load as its own, found as node resolves the server's "typescript"
// from where its files really are; never one inside root. "" when there is
// none.
func ownTsserver(bin, root string) string {
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return ""
	}
	for dir := filepath.Dir(real); ; dir = filepath.Dir(dir) {
		p := filepath.Join(dir, "node_modules", "typescript", "lib", "tsserver.js")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && !inside(p, root) {
			return p
		}
		if dir == filepath.Dir(dir) {
			return ""
		}
	}
}
