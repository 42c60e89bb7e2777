package skills

import (
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
	if got, want := strings.Join(names, "; "), "review: my review; pdf-forms: Fill PDF forms. Use when asked to fill a form."; got != want {
		t.Errorf("skills = %s, want %s", got, want)
	}
	for _, want := range []string{"Bad_Name", "nodesc/SKILL.md: front matter: no description", "escape"} {
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
	if p := Prompt(ss); !strings.Contains(p, "- pdf-forms: Fill PDF forms.") || !strings.Contains(p, "skill tool") {
		t.Errorf("Prompt = %q", p)
	}
	if Prompt(nil) != "" {
		t.Error("a prompt without skills")
	}
}
