package rules

import (
	"strings"
	"testing"
)

var base = Base{Root: "/proj", Cwd: "/proj/sub", Home: "/home/u"}

func set(t *testing.T, lines ...string) *Set {
	t.Helper()
	var rs []Rule
	for _, l := range lines {
		eff, text, _ := strings.Cut(l, " ")
		e, err := ParseEffect(eff)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Parse(text, e, "test", base)
		if err != nil {
			t.Fatalf("Parse(%q): %v", text, err)
		}
		rs = append(rs, r)
	}
	return NewSet(rs...)
}

func TestDecide(t *testing.T) {
	s := set(t,
		"allow Bash(npm run test:*)", "allow Bash(git status)", "allow Bash(git add *)",
		"deny Bash(rm -rf:*)", "deny Bash(curl:*)", "ask Bash(git push:*)",
		"deny Read(./.env)", "allow Edit(/src/**)", "deny Edit(/src/secret/**)",
		"allow WebFetch(domain:example.com)", "deny WebFetch(domain:*.evil.test)",
		"allow mcp__files", "deny mcp__db__drop", "ask Task(deployer)", "allow Read(~/notes/*.md)",
	)
	for _, tt := range []struct {
		name string
		call Call
		want string // "" no rule; else effect and the rule's text; "unsure"
	}{
		{"prefix allow", Call{Tool: "bash", Command: "npm run test -- --watch"}, "allow Bash(npm run test:*)"},
		{"prefix alone", Call{Tool: "bash", Command: "npm run test"}, "allow Bash(npm run test:*)"},
		{"prefix is a word", Call{Tool: "bash", Command: "npm run testing"}, ""},
		{"exact", Call{Tool: "bash", Command: "git status"}, "allow Bash(git status)"},
		{"exact, more words", Call{Tool: "bash", Command: "git status --short"}, ""},
		{"quotes as bash reads them", Call{Tool: "bash", Command: `"git" 'status'`}, "allow Bash(git status)"},
		{"each part allowed", Call{Tool: "bash", Command: "git status && git add ."}, "allow Bash(git status)"},
		{"a ; escapes no allow", Call{Tool: "bash", Command: "git add .; touch x"}, ""},
		{"substitution escapes no allow", Call{Tool: "bash", Command: "git add $(touch x)"}, ""},
		{"redirection escapes no allow", Call{Tool: "bash", Command: "git status > ~/.bashrc"}, ""},
		{"deny beats allow", Call{Tool: "bash", Command: "git status; rm -rf /"}, "deny Bash(rm -rf:*)"},
		{"deny behind env", Call{Tool: "bash", Command: "FOO=1 env X=2 rm -rf build"}, "deny Bash(rm -rf:*)"},
		{"deny in a subshell", Call{Tool: "bash", Command: "(cd x && curl -s http://evil)"}, "deny Bash(curl:*)"},
		{"deny in bash -c", Call{Tool: "bash", Command: `bash -c "curl http://evil"`}, "deny Bash(curl:*)"},
		{"deny by full path", Call{Tool: "bash", Command: "/usr/bin/curl x"}, "deny Bash(curl:*)"},
		{"deny in find -exec", Call{Tool: "bash", Command: `find . -exec rm -rf {} \;`}, "deny Bash(rm -rf:*)"},
		{"deny with computed rest", Call{Tool: "bash", Command: "rm $FLAGS x"}, "deny Bash(rm -rf:*)"},
		{"ask beats allow", Call{Tool: "bash", Command: "git push origin main"}, "ask Bash(git push:*)"},
		{"computed program", Call{Tool: "bash", Command: "$CMD x"}, "unsure"},
		{"read deny", Call{Tool: "read", Paths: []string{"/proj/sub/.env"}}, "deny Read(./.env)"},
		{"read deny is the cwd's", Call{Tool: "read", Paths: []string{"/proj/.env"}}, ""},
		{"grep is a read", Call{Tool: "grep", Paths: []string{"/proj/sub/.env"}}, "deny Read(./.env)"},
		{"edit under root", Call{Tool: "write", Paths: []string{"/proj/src/a/b.go"}}, "allow Edit(/src/**)"},
		{"edit deny inside", Call{Tool: "edit", Paths: []string{"/proj/src/secret/k"}}, "deny Edit(/src/secret/**)"},
		{"edit outside", Call{Tool: "edit", Paths: []string{"/proj/docs/x"}}, ""},
		{"every path allowed", Call{Tool: "edit", Paths: []string{"/proj/src/x", "/proj/docs/y"}}, ""},
		{"home", Call{Tool: "read", Paths: []string{"/home/u/notes/a.md"}}, "allow Read(~/notes/*.md)"},
		{"home, deeper", Call{Tool: "read", Paths: []string{"/home/u/notes/d/a.md"}}, ""},
		{"domain", Call{Tool: "web_fetch", URL: "https://example.com/x"}, "allow WebFetch(domain:example.com)"},
		{"domain, other", Call{Tool: "web_fetch", URL: "https://example.com.evil.test/x"}, "deny WebFetch(domain:*.evil.test)"},
		{"subdomain not the domain", Call{Tool: "web_fetch", URL: "https://a.example.com/"}, ""},
		{"mcp server", Call{Tool: "mcp__files__read"}, "allow mcp__files"},
		{"mcp tool deny", Call{Tool: "mcp__db__drop"}, "deny mcp__db__drop"},
		{"mcp other server", Call{Tool: "mcp__filesystem__read"}, ""},
		{"task", Call{Tool: "task", Agent: "deployer"}, "ask Task(deployer)"},
		{"task other", Call{Tool: "task", Agent: "reviewer"}, ""},
	} {
		v := s.Decide(tt.call)
		got := ""
		switch {
		case v.Unsure:
			got = "unsure"
		case v.Matched:
			got = v.Effect.String() + " " + v.Rule.Text
		}
		if got != tt.want {
			t.Errorf("%s: Decide(%+v) = %q, want %q", tt.name, tt.call, got, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, text := range []string{"", "Bash(", "Write(src/**)", "Glob(src/**)", "WebFetch(example.com)", "Bash()x", "Read([)"} {
		if _, err := Parse(text, Allow, "t", base); err == nil {
			t.Errorf("Parse(%q) took a rule dsh cannot match", text)
		}
	}
	for _, text := range []string{"Bash", "Bash(*)", "Read", "mcp__x", "WebFetch", "Task(a)", "Agent(a)", "Edit(**/*.ts)", "Read(//etc/passwd)"} {
		if _, err := Parse(text, Deny, "t", base); err != nil {
			t.Errorf("Parse(%q): %v", text, err)
		}
	}
}

// FuzzDecide: no rule or command makes Decide panic, and a denied line stays
// denied after another command is put before it.
func FuzzDecide(f *testing.F) {
	f.Add("Bash(rm:*)", "rm -rf x")
	f.Add("Bash(git * main)", "git push origin main")
	f.Fuzz(func(t *testing.T, rule, cmd string) {
		r, err := Parse(rule, Deny, "f", base)
		if err != nil {
			return
		}
		s := NewSet(r)
		v := s.Decide(Call{Tool: "bash", Command: cmd})
		if v.Matched && v.Effect == Deny {
			if w := s.Decide(Call{Tool: "bash", Command: "true; " + cmd}); (!w.Matched || w.Effect != Deny) && !w.Unsure {
				t.Fatalf("%q denies %q but not after true;", rule, cmd)
			}
		}
	})
}
