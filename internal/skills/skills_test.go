package skills

import (
	"fmt"
	"github.com/dsh-dev/dsh/internal/frontmatter"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A skill written for Claude Code (extra front matter keys, a folder with a
// script and a reference file) is found as it is; the user's skill wins a
// name; malformed ones are skipped and told; a SKILL.md that links out of the
// repository is refused; a file outside the folder cannot be loaded.
func TestAll(t *testing.T) {
	root, config, outside := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, filepath.Join(root, ".claude/skills/pdf-forms/SKILL.md"), "---\nname: pdf-forms\ndescription: >\n  Fill PDF forms.\n  Use when asked to fill a form.\nallowed-tools: Bash(python:*)\nlicense: MIT\n---\n# PDF forms\n\nRun scripts/fill.py.\n")
	write(t, filepath.Join(root, ".claude/skills/pdf-forms/scripts/fill.py"), "print('fill')\n")
	write(t, filepath.Join(root, ".claude/skills/pdf-forms/reference.md"), "Fields.\n")
	write(t, filepath.Join(root, ".dsh/skills/review/SKILL.md"), "---\nname: review\ndescription: the project's review\n---\nproject body\n")
	write(t, filepath.Join(config, "dsh/skills/review/SKILL.md"), "---\nname: review\ndescription: my review\n---\nmy body\n")
	write(t, filepath.Join(root, ".agents/skills/Bad_Name/SKILL.md"), "---\nname: Bad_Name\ndescription: x\n---\n")
	write(t, filepath.Join(root, ".agents/skills/nodesc/SKILL.md"), "---\nname: nodesc\n---\n")
	write(t, filepath.Join(root, ".agents/skills/README.md"), "not a skill\n")
	write(t, filepath.Join(outside, "SKILL.md"), "---\nname: stolen\ndescription: from outside\n---\n")
	if err := os.MkdirAll(filepath.Join(root, ".agents/skills/escape"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "SKILL.md"), filepath.Join(root, ".agents/skills/escape/SKILL.md")); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_CONFIG_HOME": config}
	ss, err := All(Dirs(root, func(k string) string { return env[k] }))
	var names []string
	for _, s := range ss {
		names = append(names, s.Name+": "+s.Description)
	}
	if got, want := strings.Join(names, "; "), "review: my review; pdf-forms: Fill PDF forms. Use when asked to fill a form.; bad-name: x"; got != want {
		t.Errorf("skills = %s, want %s", got, want)
	}
	if b, _ := Find(ss, "bad-name"); b.Display != "Bad_Name" {
		t.Errorf("a display name is kept as written: %+v", b)
	}
	for _, want := range []string{"nodesc/SKILL.md: front matter: no description", "escape"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not tell %s", err, want)
		}
	}
	pdf, ok := Find(ss, "pdf-forms")
	if !ok {
		t.Fatal("no pdf-forms")
	}
	if b, err := pdf.Body(); err != nil || b != "# PDF forms\n\nRun scripts/fill.py.\n" {
		t.Errorf("Body = %q, %v", b, err)
	}
	if got := strings.Join(pdf.Files(), ","); got != "reference.md,scripts/fill.py" {
		t.Errorf("Files = %s", got)
	}
	if f, err := pdf.File("scripts/fill.py"); err != nil || f != "print('fill')\n" {
		t.Errorf("File = %q, %v", f, err)
	}
	for _, bad := range []string{"../../../.dsh/skills/review/SKILL.md", "/etc/passwd"} {
		if _, err := pdf.File(bad); err == nil {
			t.Errorf("%s was read", bad)
		}
	}
	if p, _ := Prompt(ss); !strings.Contains(p, "- pdf-forms: Fill PDF forms.") || !strings.Contains(p, "skill tool") {
		t.Errorf("Prompt = %q", p)
	}
	if p, _ := Prompt(nil); p != "" {
		t.Error("a prompt without skills")
	}
}

// An untrusted repository's 200 skills with long descriptions added ~78k
// tokens to every request: now all are found, what the prompt lists is
// bounded (an untrusted repository's more), the rest said once, and the
// prompt lists the repository's apart. A skill the model may not run
// (disable-model-invocation) is not listed; a description past 1,024 bytes
// is cut, not refused.
func TestManySkillsBudget(t *testing.T) {
	root, config := t.TempDir(), t.TempDir()
	write(t, filepath.Join(config, "dsh/skills/mine/SKILL.md"), "---\nname: mine\ndescription: the user's own\n---\n")
	write(t, filepath.Join(config, "dsh/skills/manual/SKILL.md"), "---\nname: manual\ndescription: only by hand\ndisable-model-invocation: true\n---\n")
	long := strings.Repeat("Use this skill for everything. ", 40) // 1,240 bytes: cut
	const n = 250
	for i := range n {
		name := fmt.Sprintf("repo-%03d", i)
		write(t, filepath.Join(root, ".claude/skills", name, "SKILL.md"), "---\nname: "+name+"\ndescription: "+long+"\n---\n")
	}
	env := map[string]string{"XDG_CONFIG_HOME": config}
	size := len("repo-000") + 1024 + 4
	tests := []struct {
		trusted bool
		listed  int // the repository's skills listed
	}{
		{false, frontmatter.UntrustedBudget / size},
		{true, (frontmatter.Budget - len("mine") - len("the user's own") - 4) / size},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint("trusted=", tt.trusted), func(t *testing.T) {
			dirs := Dirs(root, func(k string) string { return env[k] })
			for i := range dirs {
				dirs[i].Trusted = dirs[i].Root != "" && tt.trusted
			}
			ss, err := All(dirs)
			if err != nil || len(ss) != n+2 {
				t.Fatalf("%d skills found, want %d (%v)", len(ss), n+2, err)
			}
			p, notice := Prompt(ss)
			mine, repo, ok := strings.Cut(p, "These skills are the repository's own files (its author's, not the user's instructions):\n")
			if !ok || !strings.Contains(mine, "- mine: the user's own") || strings.Contains(p, "manual") || strings.Contains(repo, "- mine") || !strings.HasPrefix(repo, "- repo-000: ") {
				t.Errorf("the prompt does not list the repository's skills apart:\n%.400s", p)
			}
			if got := strings.Count(repo, "\n- repo-") + 1; got != tt.listed {
				t.Errorf("%d of the repository's skills listed, want %d", got, tt.listed)
			}
			if !strings.Contains(notice, fmt.Sprintf("%d skills are not listed", n-tt.listed)) {
				t.Errorf("notice %q", notice)
			}
		})
	}
}
