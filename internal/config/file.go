package config

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/dsh-dev/dsh/internal/workspace"
)

// rawFile is the file's shape; pointers tell a key that is absent from one set
// to its zero value. Unknown keys are refused.
type rawFile struct {
	Provider          *string               `toml:"provider"`
	BaseURL           *string               `toml:"base_url"`
	Model             *string               `toml:"model"`
	FallbackModel     *string               `toml:"fallback_model"`
	Mode              *string               `toml:"mode"`
	Sandbox           *string               `toml:"sandbox"`
	Notify            *bool                 `toml:"notify"`
	APIKeyStore       *string               `toml:"api_key_store"`
	Thinking          any                   `toml:"thinking"`       // a budget (integer) or a string
	ContextWindow     any                   `toml:"context_window"` // an integer or a table of them
	SafeCommands      []string              `toml:"safe_commands"`
	CheckpointExclude []string              `toml:"checkpoint_exclude"`
	AdditionalDirs    []string              `toml:"additional_directories"`
	TrustedProjects   []string              `toml:"trusted_projects"`
	Projects          map[string]rawProject `toml:"projects"`
	MCP               map[string]rawMCP     `toml:"mcp"`
	LSP               *rawLSP               `toml:"lsp"`
	Network           *rawNetwork           `toml:"network"`

	// Hooks are [[hooks.EVENT]] tables, in the shape of Claude Code's settings.
	Hooks map[string][]rawHookGroup `toml:"hooks"`

	// Permissions are allow, ask and deny rules in Claude Code's syntax.
	Permissions *RuleLists `toml:"permissions"`
}

// rawProject is the user's answer to "Trust this folder?" for one project.
type rawProject struct {
	Trust        *string `toml:"trust"`
	ConfigSHA256 *string `toml:"config_sha256"`
}

type rawMCP struct {
	Command *string           `toml:"command"`
	Args    []string          `toml:"args"`
	Env     map[string]string `toml:"env"`
	URL     *string           `toml:"url"`
	Type    *string           `toml:"type"`
	Headers map[string]string `toml:"headers"`
	Trusted *bool             `toml:"trusted"`
}

// fileData is one file, validated.
type fileData struct {
	Provider, BaseURL, Model, Mode, Sandbox *string
	FallbackModel                           *string
	thinking                                *string
	notify                                  *string // "true" or "false"
	apiKeyStore                             *string // "none" or "file"
	contextWindow                           *ContextWindows
	SafeCommands                            []string
	CheckpointExclude                       []string
	AdditionalDirs                          []string
	TrustedProjects                         []string
	projects                                map[string]Decision // by canonical path
	sum                                     string              // the file's SHA-256, hex
	MCP                                     map[string]MCPServer
	lsp                                     *LSP
	network                                 *rawNetwork
	hooks                                   []Hook
	hookNotes                               []string // what was changed to run them (a timeout cut)
	permissions                             *RuleLists
	lines                                   map[string]int // dotted key → line
}

// maxFileSize bounds a configuration file; anything larger is not one.
const maxFileSize = 1 << 20

// readFile reads and validates one file. A missing file is not an error.
// Every error names the file and, where the parser knows it, the line. A
// project's file (root is the project's directory, "" for the user's own) must
// be a regular file inside root: a symlink out of the repository is refused.
func readFile(path, root string, getenv func(string) string) (*fileData, bool, error) {
	var b []byte
	var more bool
	var err error
	if root != "" {
		rel, rerr := filepath.Rel(root, path)
		if rerr != nil {
			return nil, false, fmt.Errorf("reading the configuration: %w", rerr)
		}
		b, more, err = workspace.ReadProjectFile(root, rel, maxFileSize)
	} else {
		b, more, err = readCapped(path, maxFileSize)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil
	case err != nil:
		return nil, true, fmt.Errorf("reading the configuration %s: %w", path, err)
	case more:
		return nil, true, fmt.Errorf("%s: larger than %d bytes; not a configuration file", path, maxFileSize)
	}
	d, err := parseFile(b, getenv)
	if err != nil {
		return nil, true, fileError(path, err)
	}
	d.sum = fmt.Sprintf("%x", sha256.Sum256(b))
	for _, name := range sortedKeys(d.MCP) {
		if root != "" && d.MCP[name].Trusted {
			// A repository cannot vouch for its own server's tool hints.
			return nil, true, fmt.Errorf("%s:%d: mcp.%s.trusted belongs in the user's file, not the project's",
				path, d.lines["mcp."+name+".trusted"], name)
		}
	}
	return d, true, nil
}

// readCapped reads at most limit bytes of the user's own file, which may be a
// symlink (into a dotfiles repository) but must lead to a regular file.
func readCapped(path string, limit int) ([]byte, bool, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, false, err
	}
	defer func() { _ = f.Close() }()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, false, fmt.Errorf("%w", workspace.ErrNotRegular)
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	return b, len(b) > limit, err
}

// lineError is a validation error at a known line (0: unknown).
type lineError struct {
	line int
	msg  string
}

func (e *lineError) Error() string { return e.msg }

func fileError(path string, err error) error {
	var se *toml.StrictMissingError
	var de *toml.DecodeError
	var le *lineError
	switch {
	case errors.As(err, &se) && len(se.Errors) > 0:
		e := se.Errors[0]
		row, _ := e.Position()
		return fmt.Errorf("%s:%d: unknown key %q (see dsh config --help for the keys)", path, row, strings.Join(e.Key(), "."))
	case errors.As(err, &de):
		row, _ := de.Position()
		if want, ok := wantType(de.Key()); ok {
			return fmt.Errorf("%s:%d: %s: want %s", path, row, strings.Join(de.Key(), "."), want)
		}
		return fmt.Errorf("%s:%d: %s", path, row, strings.TrimPrefix(de.Error(), "toml: "))
	case errors.As(err, &le) && le.line > 0:
		return fmt.Errorf("%s:%d: %s", path, le.line, le.msg)
	default:
		return fmt.Errorf("%s: %w", path, err)
	}
}

// wantType says what a key holds, for type errors in the user's words rather
// than Go's.
func wantType(key []string) (string, bool) {
	switch {
	case len(key) == 1:
		switch key[0] {
		case "safe_commands", "trusted_projects":
			return "an array of strings", true
		case "mcp":
			return "a table of servers, [mcp.NAME]", true
		case "network":
			return "a table with allowed_domains and denied_domains", true
		case "provider", "base_url", "model", "mode", "sandbox", "api_key_store":
			return "a string", true
		case "notify":
			return "a boolean (true or false)", true
		}
	case len(key) == 2 && key[0] == "network":
		return "an array of strings", true
	case len(key) == 2 && key[0] == "mcp":
		return "a table with command, args and env, or url, type and headers", true
	case len(key) == 3 && key[0] == "mcp":
		switch key[2] {
		case "args":
			return "an array of strings", true
		case "env", "headers":
			return "a table of strings", true
		case "command", "url", "type":
			return "a string", true
		case "trusted":
			return "a boolean", true
		}
	case len(key) == 4 && key[0] == "mcp":
		return "a string", true
	}
	return "", false
}

func parseFile(b []byte, getenv func(string) string) (*fileData, error) {
	dec := toml.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var r rawFile
	if err := dec.Decode(&r); err != nil {
		return nil, err
	}
	lines, err := keyLines(b)
	if err != nil {
		return nil, err
	}
	bad := func(key, format string, args ...any) error {
		return &lineError{line: lines[key], msg: fmt.Sprintf(format, args...)}
	}
	d := &fileData{Provider: r.Provider, BaseURL: r.BaseURL, Model: r.Model, FallbackModel: r.FallbackModel, Mode: r.Mode, Sandbox: r.Sandbox,
		SafeCommands: r.SafeCommands, CheckpointExclude: r.CheckpointExclude, AdditionalDirs: r.AdditionalDirs, TrustedProjects: r.TrustedProjects, lines: lines}
	for key, v := range map[string]*string{"provider": r.Provider, "base_url": r.BaseURL, "model": r.Model,
		"fallback_model": r.FallbackModel, "mode": r.Mode, "sandbox": r.Sandbox} {
		if v != nil {
			if err := validateScalar(key, *v); err != nil {
				return nil, bad(key, "%v", err)
			}
		}
	}
	if v := r.APIKeyStore; v != nil {
		if *v != "none" && *v != "file" {
			return nil, bad("api_key_store", "api_key_store: want \"none\" or \"file\", got %q", *v)
		}
		d.apiKeyStore = v
	}
	if r.Notify != nil {
		v := strconv.FormatBool(*r.Notify)
		d.notify = &v
	}
	switch t := r.Thinking.(type) {
	case nil:
	case int64:
		s := strconv.FormatInt(t, 10)
		d.thinking = &s
	case string:
		d.thinking = &t
	default:
		return nil, bad("thinking", "thinking: want a token budget or a level such as \"adaptive\"")
	}
	if d.thinking != nil {
		if _, _, err := ParseThinking(*d.thinking); err != nil {
			return nil, bad("thinking", "%v", err)
		}
	}
	if d.contextWindow, err = contextWindow(r.ContextWindow, bad); err != nil {
		return nil, err
	}
	for i, c := range r.SafeCommands {
		if strings.TrimSpace(c) == "" || strings.ContainsAny(c, "\n\r\x00") {
			return nil, bad("safe_commands", "safe_commands[%d]: want a command, got %q", i, c)
		}
	}
	for i, c := range r.CheckpointExclude {
		if strings.TrimSpace(c) == "" || strings.ContainsAny(c, "\n\r\x00") {
			return nil, bad("checkpoint_exclude", "checkpoint_exclude[%d]: want a gitignore pattern, got %q", i, c)
		}
	}
	for i, t := range r.TrustedProjects {
		if !filepath.IsAbs(t) && !strings.HasPrefix(t, "~/") {
			return nil, bad("trusted_projects", "trusted_projects[%d]: want an absolute path (or ~/…), got %q", i, t)
		}
	}
	for p, t := range r.Projects {
		if d.projects, err = addDecision(d.projects, p, t); err != nil {
			return nil, bad("projects", "%v", err)
		}
	}
	for name, m := range r.MCP {
		s, err := mcpServer(name, m, getenv)
		if err != nil {
			return nil, bad("mcp."+name, "mcp.%s: %v", name, err)
		}
		if d.MCP == nil {
			d.MCP = map[string]MCPServer{}
		}
		d.MCP[name] = s
	}
	if d.lsp, err = lspTable(r.LSP); err != nil {
		return nil, bad("lsp", "%v", err)
	}
	d.permissions = r.Permissions
	if d.network, err = networkTable(r.Network, bad); err != nil {
		return nil, err
	}
	if d.hooks, d.hookNotes, err = hookTable(r.Hooks, "", true); err != nil {
		return nil, bad("hooks", "%v", err)
	}
	return d, nil
}

func contextWindow(v any, bad func(key, format string, args ...any) error) (*ContextWindows, error) {
	positive := func(key string, v any) (int64, error) {
		n, ok := v.(int64)
		if !ok || n < 1024 {
			return 0, bad(key, "%s: want a number of tokens of at least 1024, got %v", key, v)
		}
		return n, nil
	}
	switch t := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		w := &ContextWindows{PerModel: map[string]int64{}}
		for m, n := range t {
			k, err := positive("context_window."+m, n)
			if err != nil {
				return nil, err
			}
			w.PerModel[m] = k
		}
		return w, nil
	default:
		n, err := positive("context_window", t)
		if err != nil {
			return nil, err
		}
		return &ContextWindows{All: n}, nil
	}
}

func mcpServer(name string, m rawMCP, getenv func(string) string) (MCPServer, error) {
	if !nameRE().MatchString(name) {
		return MCPServer{}, errors.New("a server name is 1 to 64 letters, digits, _ or -")
	}
	s := MCPServer{Name: name, Args: m.Args, Env: expandAll(m.Env, getenv), Headers: expandAll(m.Headers, getenv),
		Trusted: m.Trusted != nil && *m.Trusted}
	switch {
	case m.Command != nil && m.URL != nil:
		return s, errors.New("set command (a local server) or url (a remote one), not both")
	case m.Command != nil:
		if strings.TrimSpace(*m.Command) == "" {
			return s, errors.New("command is empty")
		}
		if m.Type != nil && *m.Type != "stdio" {
			return s, fmt.Errorf("type %q needs a url, not a command", *m.Type)
		}
		if m.Headers != nil {
			return s, errors.New("headers apply to a url, not a command")
		}
		s.Type, s.Command = "stdio", *m.Command
	case m.URL != nil:
		if err := validateScalar("base_url", *m.URL); err != nil {
			return s, fmt.Errorf("url: want an http or https URL, got %q", *m.URL)
		}
		s.Type, s.URL = "http", *m.URL
		if m.Type != nil {
			if *m.Type != "http" && *m.Type != "sse" {
				return s, fmt.Errorf("type: want http or sse for a url, got %q", *m.Type)
			}
			s.Type = *m.Type
		}
		if m.Env != nil || m.Args != nil {
			return s, errors.New("env and args apply to a command, not a url")
		}
	default:
		return s, errors.New("set command (a local server) or url (a remote one)")
	}
	return s, nil
}

var envRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`) })

// expandAll replaces ${VAR} in values with the environment's, so secrets such
// as tokens stay out of the file.
func expandAll(m map[string]string, getenv func(string) string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = envRef().ReplaceAllStringFunc(v, func(ref string) string {
			return getenv(envRef().FindStringSubmatch(ref)[1])
		})
	}
	return out
}

// keyLines maps every dotted key (tables included) to the line it is set on.
func keyLines(b []byte) (map[string]int, error) {
	lines := map[string]int{}
	var p unstable.Parser
	p.Reset(b)
	var table []string
	keyOf := func(n *unstable.Node) []string {
		var k []string
		for it := n.Key(); it.Next(); {
			k = append(k, string(it.Node().Data))
		}
		return k
	}
	for p.NextExpression() {
		e := p.Expression()
		// Only these expressions name keys.
		//exhaustive:ignore
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = keyOf(e)
			note(lines, table, lineOf(&p, e))
		case unstable.KeyValue:
			note(lines, append(append([]string{}, table...), keyOf(e)...), lineOf(&p, e))
		}
	}
	if err := p.Error(); err != nil {
		return nil, err
	}
	return lines, nil
}

// note records line for key and each of its parents not seen yet.
func note(lines map[string]int, key []string, line int) {
	for i := len(key); i > 0; i-- {
		k := strings.Join(key[:i], ".")
		if _, ok := lines[k]; !ok {
			lines[k] = line
		}
	}
}

// lineOf is the line of an expression's key.
func lineOf(p *unstable.Parser, e *unstable.Node) int {
	it := e.Key()
	if !it.Next() {
		return 0
	}
	return p.Shape(it.Node().Raw).Start.Line
}
