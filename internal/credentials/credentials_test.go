package credentials

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStoreThenEnvFindsTheKey(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HOME": home}
	getenv := func(k string) string { return env[k] }
	path := Path(getenv)
	if want := filepath.Join(home, ".config", "dsh", "credentials"); path != want {
		t.Fatalf("Path = %q, want %q", path, want)
	}
	if got := Env(getenv)("ANTHROPIC_API_KEY"); got != "" {
		t.Fatalf("no file yet, got %q", got)
	}
	if err := Store(path, "ANTHROPIC_API_KEY", "sk-one"); err != nil {
		t.Fatal(err)
	}
	if err := Store(path, "OPENAI_API_KEY", "sk-two"); err != nil {
		t.Fatal(err)
	}
	if err := Store(path, "ANTHROPIC_API_KEY", "sk-three"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %04o, want 0600", fi.Mode().Perm())
	}
	e := Env(getenv)
	if got := e("ANTHROPIC_API_KEY"); got != "sk-three" {
		t.Fatalf("ANTHROPIC_API_KEY = %q", got)
	}
	if got := e("OPENAI_API_KEY"); got != "sk-two" {
		t.Fatalf("OPENAI_API_KEY = %q", got)
	}
	// The environment wins, and other names are never read from the file.
	env["OPENAI_API_KEY"] = "from-env"
	if got := e("OPENAI_API_KEY"); got != "from-env" {
		t.Fatalf("environment lost: %q", got)
	}
	if got := e("PATH"); got != "" {
		t.Fatalf("PATH = %q", got)
	}
}

func TestLoadRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, body string
		mode       os.FileMode
		want       string
	}{
		{"open", "ANTHROPIC_API_KEY=x\n", 0o644, "may be read by other users"},
		{"other-name", "PATH=/evil\n", 0o600, "want NAME=value"},
		{"no-equals", "ANTHROPIC_API_KEY\n", 0o600, "want NAME=value"},
		{"big", strings.Repeat("#", maxSize+1), 0o600, "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(write(tc.name, tc.body, tc.mode))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if err := Store(filepath.Join(dir, "x"), "PATH", "v"); err == nil {
		t.Fatal("stored PATH")
	}
	if err := Store(filepath.Join(dir, "x"), "OPENAI_API_KEY", "a\nPATH=/evil"); err == nil {
		t.Fatal("stored a key that spans lines")
	}
	if err := os.Symlink(dir, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(filepath.Join(dir, "link")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a directory: %v", err)
	}
}
