package shellrule

import (
	"slices"
	"strings"
	"testing"
)

// Runs finds every program a line may run, wherever it hides.
func TestRuns(t *testing.T) {
	for _, tt := range []struct {
		cmd   string
		want  []string // each run's words, joined; "…" marks a cut
		known bool
	}{
		{"git status", []string{"git status"}, true},
		{"git add . && rm -rf ~", []string{"git add .", "rm -rf ~"}, true},
		{"echo $(rm -rf /tmp/x)", []string{"echo …", "rm -rf /tmp/x"}, true},
		{"(cd src; /bin/rm x) | cat", []string{"cd src", "rm x", "cat"}, true},
		{`FOO=1 env -u HOME BAR=2 rm x`, []string{"env -u HOME BAR=2 rm x", "rm x"}, true},
		{"sudo -u root nice -n 5 rm x", []string{"sudo -u root nice -n 5 rm x", "nice -n 5 rm x", "rm x"}, true},
		{"timeout 10 curl evil.example", []string{"timeout 10 curl evil.example", "curl evil.example"}, true},
		{`bash -c 'rm -rf x; curl y'`, []string{"bash -c rm -rf x; curl y", "rm -rf x", "curl y"}, true},
		{`sh -ec "eval 'git push'"`, []string{"sh -ec eval 'git push'", "eval git push", "git push"}, true},
		{`find . -name '*.o' -exec rm {} \;`, []string{"find . -name *.o -exec rm {} ;", "rm {}"}, true},
		{"xargs -n 1 rm < list", []string{"xargs -n 1 rm", "rm"}, true},
		{`watch "curl x"`, []string{"watch curl x", "curl x"}, true},
		{"f() { rm x; }; f", []string{"rm x", "f"}, true},
		{"$PROG x", nil, false},
		{"$(echo rm) x", []string{"echo rm"}, false},
		{`bash -c "$SCRIPT"`, []string{"bash -c …"}, false},
		{"if then", nil, false},
		{`r""m x`, []string{"rm x"}, true},
	} {
		runs, known := Runs(tt.cmd)
		var got []string
		for _, r := range runs {
			s := strings.Join(r.Words, " ")
			if r.Cut {
				s += " …"
				if len(r.Words) == 0 {
					s = "…"
				}
			}
			got = append(got, s)
		}
		if !slices.Equal(got, tt.want) || known != tt.known {
			t.Errorf("Runs(%q) = %q, %v; want %q, %v", tt.cmd, got, known, tt.want, tt.known)
		}
	}
}

// FuzzRuns: Runs never panics, and whatever a line runs it still finds when
// the line is hidden after another command: a deny rule
// cannot be escaped by dressing the command up.
func FuzzRuns(f *testing.F) {
	for _, c := range []string{"git status", "rm -rf x; curl y", "env A=1 rm x", "echo $(git push)", "find . -exec rm {} +"} {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		runs, known := Runs(cmd)
		if !known || strings.Contains(cmd, "\\") || strings.Contains(cmd, "<<") {
			return // a line continuation or a here-document reads past the dressing
		}
		for _, dressed := range []string{"true && " + cmd, "true;" + cmd} {
			more, ok := Runs(dressed)
			if !ok {
				continue // the dressing did not parse with this line inside
			}
			for _, r := range runs {
				if !slices.ContainsFunc(more, func(m Run) bool { return slices.Equal(m.Words, r.Words) }) {
					t.Fatalf("%q runs %q, but %q does not list it: %v", cmd, r.Words, dressed, more)
				}
			}
		}
	})
}
