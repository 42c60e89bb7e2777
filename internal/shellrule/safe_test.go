package shellrule

import "testing"

// safeEntryCases proves every entry of safeTable: commands it lets run without
// asking, and variants that must ask (the entry's own rules first).
var safeEntryCases = map[string]struct{ ok, notSafe []string }{
	"ls":            {[]string{"ls", "ls -la internal", "ls src/*.go"}, []string{"ls > listing", "ls *", "./ls"}},
	"pwd":           {[]string{"pwd", "pwd -P"}, []string{"pwd > f"}},
	"cat":           {[]string{"cat go.mod", "cat -n a b"}, []string{"cat x > y", "cat > f <<EOF\nx\nEOF"}},
	"head":          {[]string{"head -n 5 README.md"}, []string{"head -n1 *"}},
	"tail":          {[]string{"tail -20 build.log"}, []string{"tail -f $LOG"}},
	"wc":            {[]string{"wc -l main.go"}, []string{"wc -l *"}},
	"file":          {[]string{"file bin/dsh", "file -b x"}, []string{"file -C -m magic", "file -bC -m magic", "file --compile -m m"}},
	"stat":          {[]string{"stat -c %s go.mod"}, []string{"stat $(which ls)"}},
	"du":            {[]string{"du -sh ."}, []string{"du -sh ~+"}},
	"grep":          {[]string{"grep -rn TODO internal", "grep -e -x f"}, []string{"grep -r x *"}},
	"rg":            {[]string{"rg -n 'func main' .", "rg --pre-globx x"}, []string{"rg -z foo", "rg -iz foo", "rg --search-zip foo", "rg --pre ./x foo", "rg --pre-glob '*.gz' foo"}},
	"find":          {[]string{"find . -name '*.go' -type f", "find . -print0"}, []string{"find . -delete", "find . -exec id ;", "find . -fprint f"}},
	"git status":    {[]string{"git status", "git status --porcelain=v2"}, []string{"git -c core.fsmonitor=x status", "git status > f"}},
	"git log":       {[]string{"git log --oneline -5", "git log -p --no-ext-diff --no-textconv"}, []string{"git log --ext-diff -p", "git log --output=f", "git log --textconv", "git log --textc"}},
	"git diff":      {[]string{"git diff HEAD~1", "git diff --text --stat"}, []string{"git diff --ext-diff", "git diff --ext", "git diff --textconv", "git diff --output f"}},
	"git show":      {[]string{"git show HEAD:go.mod"}, []string{"git show --textconv HEAD", "git show --ext-diff"}},
	"git branch":    {[]string{"git branch", "git branch -a", "git branch -vv", "git branch --list 'feat*'", "git branch --contains HEAD", "git branch --sort -committerdate", "git branch --show-current"}, []string{"git branch -D x", "git branch -d x", "git branch newname", "git branch -m a b", "git branch --set-upstream-to=o/m", "git branch -c a b", "git branch --abbrev 5", "git branch -f x HEAD"}},
	"git rev-parse": {[]string{"git rev-parse HEAD", "git rev-parse --show-toplevel"}, []string{"git -C /x rev-parse HEAD"}},
	"git ls-files":  {[]string{"git ls-files", "git ls-files -m"}, []string{"git ls-files > f"}},
	"git blame":     {[]string{"git blame -L 1,5 go.mod"}, []string{"git blame --textconv f", "git blame --textc f"}},
	"go list":       {[]string{"go list ./...", "go list -m -json all", "go list -f '{{.Dir}}' ./..."}, []string{"go list -export ./...", "go list -compiled ./...", "go list --export=true ./...", "go list -mod=mod ./...", "go list -modfile=x.mod ./..."}},
	"go env":        {[]string{"go env", "go env GOPATH GOOS"}, []string{"go env -w X=y", "go env --w=x", "go env -u X"}},
	"go version":    {[]string{"go version", "go version -m bin/dsh"}, []string{"GOTOOLCHAIN=go1.99 go version"}},
	"echo":          {[]string{"echo hello world", "echo -n x"}, []string{"echo x > f", "echo $x"}},
	"printf":        {[]string{`printf '%s\n' a`, "printf -- -v"}, []string{"printf -v x y", "printf -vx y"}},
	"test":          {[]string{"test -f go.mod", "test a = b"}, []string{"test -v x", "test -R x"}},
	"[":             {[]string{"[ -d internal ]"}, []string{"[ -v x ]"}},
	"sort":          {[]string{"ls | sort", "sort -rn -k2 f"}, []string{"sort -o f g", "ls | sort -uo f", "sort --compress-program=x f", "sort --out=f"}},
	"uniq":          {[]string{"sort f | uniq -c", "uniq -f 2 in.txt", "uniq --skip-fields 1 in"}, []string{"uniq in.txt out.txt", "uniq -c in out", "uniq -- in out"}},
	"cut":           {[]string{"cut -d: -f1 passwd"}, []string{"cut -f1 f > g"}},
	"tr":            {[]string{"echo a | tr a-z A-Z", "tr -d x"}, []string{"tr a b < f"}},
}

func TestSafeTableEntries(t *testing.T) {
	inTable := map[string]bool{}
	for _, e := range safeTable {
		inTable[e.cmd] = true
		c, ok := safeEntryCases[e.cmd]
		if !ok || len(c.ok) == 0 || len(c.notSafe) == 0 {
			t.Errorf("safe table entry %q has no allowed and refused test", e.cmd)
			continue
		}
		for _, cmd := range c.ok {
			if v := Classify(cmd, nil); !v.Safe {
				t.Errorf("%s: %q is not safe (%+v)", e.cmd, cmd, v)
			}
		}
		for _, cmd := range c.notSafe {
			if v := Classify(cmd, nil); v.Safe {
				t.Errorf("%s: %q is safe", e.cmd, cmd)
			}
		}
	}
	for cmd := range safeEntryCases {
		if !inTable[cmd] {
			t.Errorf("test for %q, which the safe table lacks", cmd)
		}
	}
}

// The user's additions match by leading words and still pass the strict rule.
func TestExtraSafe(t *testing.T) {
	extra := []string{"make test", "  just   lint ", "bash", "", "./tools/check.sh"}
	for _, tc := range []struct {
		cmd        string
		safe, keep bool
	}{
		{"make test", true, true},
		{"make test -j8", true, true},
		{"just lint && make test", true, true},
		{"./tools/check.sh --fast", false, true}, // a path is never safe, even if listed
		{"make lint", false, true},
		{"make", false, true},
		{"make test > out", false, false},
		{"FOO=1 make test", false, false},
		{"make test $(id)", false, false},
		{"bash -c id", false, false},
		{"bash", false, false},
		{"make test | sh", false, false},
		{"make test && rm -rf x", false, true},
	} {
		v := Classify(tc.cmd, extra)
		if v.Safe != tc.safe || v.Rememberable != tc.keep {
			t.Errorf("%q with %q: %+v, want safe %v, rememberable %v", tc.cmd, extra, v, tc.safe, tc.keep)
		}
	}
	if v := Classify("make test", nil); v.Safe {
		t.Errorf("make test is safe without the user's addition")
	}
}

// TestRunsGit: a safe command is guarded against the repository's git config
// exactly when some part may run git.
func TestRunsGit(t *testing.T) {
	for _, tc := range []struct {
		cmd   string
		extra []string
		want  bool
	}{
		{cmd: "ls -la", want: false},
		{cmd: "cat go.mod | wc -l", want: false},
		{cmd: "git status", want: true},
		{cmd: "ls && git log --oneline -3", want: true},
		{cmd: "go list ./...", want: true},
		{cmd: "make test", extra: []string{"make test"}, want: true},
		{cmd: "echo x | make test", extra: []string{"make test"}, want: true},
		{cmd: "git commit -m x", want: false}, // not safe: the user is asked, no guard
	} {
		if got := Classify(tc.cmd, tc.extra).RunsGit; got != tc.want {
			t.Errorf("Classify(%q).RunsGit = %v, want %v", tc.cmd, got, tc.want)
		}
	}
}
