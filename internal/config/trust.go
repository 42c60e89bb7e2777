package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/dsh-dev/dsh/internal/workspace"
)

// Decision is the user's answer to "Trust this folder?" for one project, kept
// in the user's file as
//
//	[projects."/abs/path"]
//	trust = "trusted"          # or "untrusted"
//	config_sha256 = "…"        # the project file the answer was given for
//
// An answer holds for the file it was given for: once the project's file
// changes, a trusted project is untrusted again (and told so) until the user
// answers anew.
type Decision struct {
	Trusted bool
	SHA256  string
}

func addDecision(m map[string]Decision, path string, r rawProject) (map[string]Decision, error) {
	if !filepath.IsAbs(path) {
		return m, fmt.Errorf("projects.%q: want an absolute path", path)
	}
	if r.Trust == nil || (*r.Trust != "trusted" && *r.Trust != "untrusted") {
		return m, fmt.Errorf("projects.%q: trust: want \"trusted\" or \"untrusted\"", path)
	}
	if r.ConfigSHA256 == nil {
		return m, fmt.Errorf("projects.%q: config_sha256: want the SHA-256 of the project's file", path)
	}
	if m == nil {
		m = map[string]Decision{}
	}
	m[canonical(path, nil)] = Decision{Trusted: *r.Trust == "trusted", SHA256: *r.ConfigSHA256}
	return m, nil
}

// canonical is p absolute, cleaned, ~ expanded and symlinks resolved, so an
// alias of a project cannot slip past its trust ("" when p has no absolute
// form).
func canonical(p string, getenv func(string) string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok && getenv != nil && getenv("HOME") != "" {
		p = filepath.Join(getenv("HOME"), rest)
	}
	p, err := filepath.Abs(p)
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return p
}

// RecordTrust writes the user's answer for the project at root, whose file
// has the SHA-256 sum, into the user's file: an earlier answer for the project
// is replaced, the rest of the file is kept as it is.
func RecordTrust(getenv func(string) string, root, sum string, trusted bool) error {
	path := UserPath(getenv)
	if path == "" {
		return errors.New("no user configuration file: set HOME or XDG_CONFIG_HOME")
	}
	key := canonical(root, getenv)
	if key == "" || strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Errorf("cannot record the trust of %q", root)
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading the configuration: %w", err)
	}
	b, err := withoutTable(old, []string{"projects", key})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > 0 && !bytes.HasSuffix(b, []byte("\n")) {
		b = append(b, '\n')
	}
	trust := "untrusted"
	if trusted {
		trust = "trusted"
	}
	quoted := `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(key) + `"`
	b = fmt.Appendf(b, "\n[projects.%s]\ntrust = %q\nconfig_sha256 = %q\n", quoted, trust, sum)
	if err := workspace.WriteOwnFile(path, b, 0o600); err != nil {
		return fmt.Errorf("recording the trust in %s: %w", path, err)
	}
	return nil
}

// withoutTable is b without the table named key: from its header to the
// next table's.
func withoutTable(b []byte, key []string) ([]byte, error) {
	var p unstable.Parser
	p.Reset(b)
	start, end := -1, -1
	for p.NextExpression() {
		e := p.Expression()
		if e.Kind != unstable.Table && e.Kind != unstable.ArrayTable {
			continue
		}
		var k []string
		for it := e.Key(); it.Next(); {
			k = append(k, string(it.Node().Data))
		}
		line := lineOf(&p, e)
		switch {
		case start >= 0 && end < 0:
			end = line
		case start < 0 && slices.Equal(k, key):
			start = line
		}
	}
	if err := p.Error(); err != nil {
		return nil, err
	}
	if start < 0 {
		return b, nil
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	if end < 0 {
		end = len(lines) + 1
	}
	out := bytes.TrimRight(bytes.Join(lines[:start-1], nil), "\n")
	if rest := bytes.Join(lines[end-1:], nil); len(rest) > 0 {
		out = append(append(out, "\n\n"...), rest...)
	}
	return out, nil
}
