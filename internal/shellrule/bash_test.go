package shellrule

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// attack is a command that makes real bash create the file "pwned" although
// every program it names is harmless, or named by an approval a user gave.
type attack struct {
	cmd   string
	env   []string          // the environment an earlier step (or the agent) left
	files map[string]string // files of a hostile repository, executable
	repo  bool              // run in a git repository
}

var attacks = []attack{
	// Code hidden in strings that bash evaluates as arithmetic or as names.
	{cmd: "echo $(( a[$(touch pwned)] ))"},
	{cmd: "x='a[$(touch pwned)]'; echo $((x))"},
	{cmd: "echo $((x))", env: []string{"x=a[$(touch pwned)]"}},
	{cmd: "(( x ))", env: []string{"x=a[$(touch pwned)]"}},
	{cmd: "[[ x -eq 0 ]]", env: []string{"x=a[$(touch pwned)]"}},
	{cmd: "[[ 'a[$(touch pwned)]' -eq 0 ]]"},
	{cmd: "echo ${x@P}", env: []string{"x=$(touch pwned)"}},
	{cmd: "echo ${!x}", env: []string{"x=a[$(touch pwned)]"}},
	{cmd: "printf -v 'a[$(touch pwned)]' x"},
	{cmd: "test -v 'a[$(touch pwned)]'"},
	{cmd: "[ -v 'a[$(touch pwned)]' ]"},
	{cmd: "[[ -v 'a[$(touch pwned)]' ]]"},
	{cmd: "read 'a[$(touch pwned)]' <<< x"},
	{cmd: "declare 'a[$(touch pwned)]=1'"},
	{cmd: "a=(1); unset 'a[$(touch pwned)]'"},
	{cmd: "let 'a[$(touch pwned)]'"},
	{cmd: "mapfile -t -C 'touch pwned' -c 1 lines <<< x"},
	{cmd: "echo $(touch pwned)"},
	{cmd: "echo `touch pwned`"},
	{cmd: "echo ${z:-$(touch pwned)}"},
	{cmd: "cat <<< $(touch pwned)"},
	{cmd: "cat <<EOF\n$(touch pwned)\nEOF"},
	{cmd: "cat <(touch pwned)"},
	{cmd: "{touch,pwned}"},
	{cmd: "/usr/bin/tou?h pwned"},
	// Redirections.
	{cmd: "echo x > pwned"},
	{cmd: "echo x >> pwned"},
	{cmd: "echo x >| pwned"},
	{cmd: "echo x &> pwned"},
	{cmd: "echo x >& pwned"},
	{cmd: "ls 2> pwned"},
	{cmd: "cat <> pwned"},
	{cmd: "cat > pwned <<EOF\nx\nEOF"},
	{cmd: "exec 3> pwned"},
	// Assignment prefixes.
	{cmd: "PATH=.:$PATH ls", files: map[string]string{"ls": "#!/bin/sh\ntouch pwned\n"}},
	{cmd: "BASH_ENV=./evil bash -c true", files: map[string]string{"evil": "touch pwned\n"}},
	{cmd: "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch pwned; false' git status", repo: true},
	// Programs that run their arguments, or write where an option says.
	{cmd: "bash -c 'touch pwned'"},
	{cmd: "sh -c 'touch pwned'"},
	{cmd: "eval 'touch pwned'"},
	{cmd: "exec touch pwned"},
	{cmd: "env touch pwned"},
	{cmd: "xargs touch <<< pwned"},
	{cmd: "command touch pwned"},
	{cmd: "builtin eval 'touch pwned'"},
	{cmd: "nohup touch pwned"},
	{cmd: "timeout 5 touch pwned"},
	{cmd: "nice touch pwned"},
	{cmd: "time touch pwned"},
	{cmd: "trap 'touch pwned' EXIT"},
	{cmd: "source ./evil", files: map[string]string{"evil": "touch pwned\n"}},
	{cmd: ". ./evil", files: map[string]string{"evil": "touch pwned\n"}},
	{cmd: "hash -p ./evil ls; ls", files: map[string]string{"evil": "#!/bin/sh\ntouch pwned\n"}},
	{cmd: `find . -maxdepth 0 -exec touch pwned \;`},
	{cmd: "find . -maxdepth 0 -fprint pwned"},
	{cmd: "find . -maxdepth 0 -fls pwned"},
	{cmd: "sort -o pwned /dev/null"},
	{cmd: "sort --out=pwned /dev/null"},
	{cmd: "awk 'BEGIN { system(\"touch pwned\") }'"},
	{cmd: "sed -n 'w pwned' /dev/null"},
	{cmd: `perl -e 'open F, ">pwned"'`},
	{cmd: `python3 -c 'open("pwned", "w")'`},
	{cmd: `node -e 'require("fs").writeFileSync("pwned", "")'`},
	{cmd: "git -c core.fsmonitor='touch pwned; false' status", repo: true},
	{cmd: "git diff --output=pwned", repo: true},
	{cmd: "git diff *", repo: true, files: map[string]string{"--output=pwned": ""}},
	// Shell structure.
	{cmd: "f() { touch pwned; }; f"},
	{cmd: "touch pwned & wait"},
	{cmd: "if true; then touch pwned; fi"},
}

// Every attack really runs its payload in bash (so the class is real, and the test
// would notice a bash that changed), and the rule refuses every one of them.
func TestAttacksRunInRealBash(t *testing.T) {
	bash := lookPath(t, "bash")
	for _, a := range attacks {
		v := Classify(a.cmd, nil)
		if v.Rememberable || v.Safe {
			t.Errorf("%q: %+v, want refused", a.cmd, v)
		}
		needs := []string{}
		if a.repo {
			needs = append(needs, "git")
		}
		for _, p := range []string{"perl", "python3", "node", "awk", "sed"} {
			if strings.HasPrefix(a.cmd, p+" ") {
				needs = append(needs, p)
			}
		}
		if missing := absent(needs); missing != "" {
			t.Logf("%q: %s is not installed; checked the verdict only", a.cmd, missing)
			continue
		}
		dir := t.TempDir()
		if a.repo {
			run(t, dir, nil, "git", "init", "-q")
		}
		for name, body := range a.files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		run(t, dir, a.env, bash, "-c", a.cmd)
		if _, err := os.Stat(filepath.Join(dir, "pwned")); err != nil {
			t.Errorf("%q did not run its payload in bash: %v", a.cmd, err)
		}
	}
}

// Every command the tests call safe, run in bash in a git repository, changes no
// file outside .git (git status may refresh the index).
func TestSafeCommandsWriteNothing(t *testing.T) {
	bash := lookPath(t, "bash")
	lookPath(t, "git")
	root := t.TempDir()
	work, home := filepath.Join(root, "work"), filepath.Join(root, "home")
	for _, d := range []string{filepath.Join(work, "internal"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range map[string]string{
		"go.mod": "module example.com/x\n\ngo 1.22\n", "main.go": "package main\n\nfunc main() {}\n",
		"README.md": "# x\nTODO\n", "f": "x:1\ny:2\n", "in.txt": "a\na\nb\n", "build.log": "ok\n",
		"internal/a.go": "package internal\n",
	} {
		if err := os.WriteFile(filepath.Join(work, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, work, nil, "git", "init", "-q")
	run(t, work, nil, "git", "add", "-A")
	run(t, work, []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"},
		"git", "commit", "-qm", "x")
	var cmds []string
	for _, c := range classifyCases {
		if c.safe {
			cmds = append(cmds, c.cmd)
		}
	}
	for _, e := range slices.Sorted(maps.Keys(safeEntryCases)) {
		cmds = append(cmds, safeEntryCases[e].ok...)
	}
	before := snapshot(t, root)
	// The go command's caches and telemetry counters live outside the tree watched.
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + t.TempDir(), "GOCACHE=" + filepath.Join(t.TempDir(), "cache"), "GOFLAGS=-modcacherw",
		"GOPATH=" + filepath.Join(t.TempDir(), "gopath"), "GOTOOLCHAIN=local", "GOPROXY=off"}
	for _, cmd := range cmds {
		if !Classify(cmd, nil).Safe {
			t.Errorf("%q is not safe", cmd)
			continue
		}
		run(t, work, env, bash, "-c", cmd)
		if after := snapshot(t, root); !maps.Equal(before, after) {
			t.Fatalf("%q changed files: before %v, after %v", cmd, before, after)
		}
	}
}

func lookPath(t *testing.T, prog string) string {
	t.Helper()
	p, err := exec.LookPath(prog)
	if err != nil {
		t.Skipf("%s is not installed", prog)
	}
	return p
}

func absent(progs []string) string {
	for _, p := range progs {
		if _, err := exec.LookPath(p); err != nil {
			return p
		}
	}
	return ""
}

// run runs a program to its end, whatever its exit status (an attack may fail
// after its payload ran), with a bounded time so a hang fails the test.
func run(t *testing.T, dir string, env []string, prog string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LC_ALL=C"}, env...)
	_ = cmd.Run() // the exit status is not what is tested
	if ctx.Err() != nil {
		t.Fatalf("%s %q did not finish: %v", prog, args, ctx.Err())
	}
}

// snapshot maps every file and directory under root, but .git, to its mode,
// modification time and size.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files[p] = fmt.Sprint(info.Mode(), " ", info.ModTime(), " ", info.Size())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
