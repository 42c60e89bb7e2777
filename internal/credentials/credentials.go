// Package credentials keeps the API keys a user handed dsh (with `dsh login`,
// or through an editor's sign-in when the user's configuration says
// api_key_store = "file") in a file of their own, readable by them alone, so
// that every dsh after finds them as if they were in the environment. Keys
// never reach a session log, a command's environment or a project file.
package credentials

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dsh-dev/dsh/internal/workspace"
)

// Names are the variables a credentials file may hold: the providers' keys.
var Names = []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"}

// maxSize bounds the file: a few keys, not a dump.
const maxSize = 64 << 10

// Path is the user's credentials file: $XDG_CONFIG_HOME/dsh/credentials, else
// ~/.config/dsh/credentials; "" when neither variable helps.
func Path(getenv func(string) string) string {
	if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "dsh", "credentials")
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".config", "dsh", "credentials")
	}
	return ""
}

// Env reads the environment through getenv, and a provider key that is not
// set there from the credentials file. The file is read at each lookup of a
// key (rarely: when a provider is built), so a key stored after dsh started is
// found by its next prompt. A file that cannot be read counts as absent.
func Env(getenv func(string) string) func(string) string {
	return func(k string) string {
		if v := getenv(k); v != "" || !slices.Contains(Names, k) {
			return v
		}
		keys, err := Load(Path(getenv))
		if err != nil {
			return ""
		}
		return keys[k]
	}
}

// Load reads the file at path: NAME=value lines for the names in Names. A
// missing file holds nothing; one that others may read is refused, since the
// keys in it would not be the user's alone.
func Load(path string) (map[string]string, error) {
	if path == "" {
		return nil, nil
	}
	b, err := readPrivate(path, maxSize)
	if err != nil || b == nil {
		return nil, err
	}
	keys := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		if !ok || !slices.Contains(Names, name) {
			return nil, fmt.Errorf("%s:%d: want NAME=value with NAME one of %s", path, n, strings.Join(Names, ", "))
		}
		keys[name] = value
	}
	return keys, nil
}

// Store sets name to value in the file at path, creating it (and its
// directory) readable by the user alone. The file is replaced whole, so a
// crash leaves the old one or the new one.
func Store(path, name, value string) error {
	if path == "" {
		return errors.New("no place for the credentials: set HOME or XDG_CONFIG_HOME")
	}
	if !slices.Contains(Names, name) {
		return fmt.Errorf("%s is not a key dsh keeps (one of %s)", name, strings.Join(Names, ", "))
	}
	if value == "" || strings.ContainsAny(value, "\r\n\x00") {
		return errors.New("the key is empty or spans lines")
	}
	keys, err := Load(path)
	if err != nil {
		return err
	}
	if keys == nil {
		keys = map[string]string{}
	}
	keys[name] = value
	var b strings.Builder
	b.WriteString("# API keys dsh uses when the environment has none (dsh login). Keep this file private.\n")
	for _, k := range Names {
		if v, ok := keys[k]; ok {
			fmt.Fprintf(&b, "%s=%s\n", k, v)
		}
	}
	if err := workspace.WriteOwnFile(path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("storing the key: %w", err)
	}
	return nil
}

// Forget removes the file at path and every key in it; a missing file is
// already forgotten.
func Forget(path string) error {
	if path == "" {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("forgetting the keys: %w", err)
	}
	return nil
}

// readPrivate reads the file at path, at most max bytes; nil for a missing
// file. One that others may read is refused, since what it holds would not be
// the user's alone.
func readPrivate(path string, max int) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the credentials: %w", err)
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading the credentials: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s may be read by other users (mode %04o): run chmod 600 on it", path, fi.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, fmt.Errorf("reading the credentials: %w", err)
	}
	if len(b) > max {
		return nil, fmt.Errorf("%s: larger than %d bytes; not a credentials file", path, max)
	}
	return b, nil
}
