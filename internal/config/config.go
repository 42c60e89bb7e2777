// Package config reads dsh's configuration files and says where each effective
// setting came from.
//
// Two files are read: the user's, $XDG_CONFIG_HOME/dsh/config.toml (else
// ~/.config/dsh/config.toml), and the project's, .dsh/config.toml in the
// workspace root. The project wins over the user, the environment over both
// where it names a setting (ANTHROPIC_BASE_URL, OPENAI_BASE_URL), and flags over
// everything.
//
// The project file comes with the repository, which may be hostile, so it
// cannot widen what dsh does unasked: unless the user's file lists the project
// in trusted_projects, its base_url (where the API key is sent), mcp servers
// (commands run at start), safe_commands, a mode other than default or
// read-only, and sandbox = "off" are ignored, each with a notice. Its
// [network] domains only ever narrow the user's (see Network).
package config

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dsh-dev/dsh/internal/provider/providers"
)

// Config is the effective configuration. Empty strings mean "not set": the
// consumer applies its own default.
type Config struct {
	Provider string // a name in providers.Names
	BaseURL  string
	// OpenAIAPI is "chat" or "responses": the API OpenAI's models are asked
	// through; "" lets the provider choose per model.
	OpenAIAPI string
	Model     string
	// FallbackModel is the model a turn goes on with when Model is
	// overloaded or unavailable; "" means none.
	FallbackModel string
	Mode          string // a permission mode name; the agent validates it
	Sandbox       string // off, on or network-off
	// Thinking is off, adaptive, an effort level (low, medium, high, xhigh,
	// max) or a token budget in decimal; see ParseThinking.
	Thinking string
	// Notify is "false" when the chat must not ring or send a notification
	// (OSC 9) when a turn ends or a prompt waits while the terminal is in the
	// background; "" or "true" it does.
	Notify string
	// APIKeyStore is "file" when a key the user gives an editor's sign-in is
	// kept in the credentials file for every dsh after; "" or "none" it is not
	// kept. Only the user's file sets it: where keys go is theirs to say.
	APIKeyStore   string
	ContextWindow ContextWindows
	// SafeCommands are commands added to those the bash tool runs without asking.
	SafeCommands []string
	// CheckpointExclude are gitignore patterns of files checkpoints never
	// copy, beside the secrets they leave out anyway.
	CheckpointExclude []string
	// AdditionalDirs are further directories sessions work in, as given
	// (relative ones are the session directory's): confined, sandboxed and
	// asked about like the workspace.
	AdditionalDirs []string
	MCP            []MCPServer // sorted by name
	LSP            LSP
	// Network filters by domain what sandboxed commands and web_fetch reach.
	Network Network
	// Hooks are the hook commands of the user's files and, when the project is
	// trusted, the project's (dsh's config.toml, then Claude Code's settings).
	Hooks []Hook
	// NoBypass, if set, is the Claude Code settings file whose
	// permissions.disableBypassPermissionsMode turns the bypass mode off (a
	// project's too: it only takes a mode away).
	NoBypass string
	// ClaudeHooksOff, if set, is the Claude Code settings file whose
	// disableAllHooks turns off the hooks of Claude Code's settings and
	// plugins (dsh's own files' hooks still run).
	ClaudeHooksOff string
	// Permissions are the allow, ask and deny rules of every file, in the
	// order read.
	Permissions []PermissionRule
	// Files are the configuration files looked at, found or not.
	Files []File
	// Notices are project settings that were ignored, and why.
	Notices []string

	getenv func(string) string
	// layers holds every candidate of each scalar key, lowest precedence first.
	layers map[string][]candidate
	// sources of the non-scalar settings, by key.
	sources map[string]string
	// envBaseURL, when set, names the variable the resolved BaseURL came from.
	envBaseURL string
	// envThinking: Thinking is MAX_THINKING_TOKENS's, as Claude Code reads it.
	envThinking bool
}

type candidate struct{ value, source string }

// File is a configuration file dsh looked for.
type File struct {
	Path    string
	Scope   string // "user" or "project"
	Exists  bool
	Trusted bool // a project file the user trusts (trusted_projects, or the answer for this very file)
	// Decided says the user has answered "Trust this folder?" for this very
	// file (or lists the project in trusted_projects): there is nothing to ask.
	Decided bool
	// Changed says the user trusted the project's file as it was before: it is
	// not trusted as it is now.
	Changed bool
	SHA256  string // the file's, hex; "" when it does not exist
	// Claude says that the project has no .dsh/config.toml but has Claude
	// Code settings (.claude/settings.json): they are what "Trust this
	// folder?" is about, and SHA256 is theirs.
	Claude bool
	// mcpOnly: of those, it has only a .mcp.json.
	mcpOnly bool
}

// Named is the file "Trust this folder?" is about: the project's
// config.toml, or its Claude Code settings when it has only those (its
// .mcp.json when that is all).
func (f File) Named() string {
	if f.Claude {
		root := filepath.Dir(filepath.Dir(f.Path))
		if f.mcpOnly {
			return filepath.Join(root, ".mcp.json")
		}
		return filepath.Join(root, ".claude", "settings.json")
	}
	return f.Path
}

// MCPServer is one [mcp.NAME] table. Its fields match mcp.ServerConfig so one
// converts to the other.
type MCPServer struct {
	Name    string
	Type    string // stdio, http or sse
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Headers map[string]string
	// Trusted (`trusted = true`, in the user's file only): the server's tool
	// hints are believed, so tools it marks read-only run without asking.
	Trusted bool
	// OAuth (`oauth = {…}`) is how dsh signs in to a url server: nil signs in
	// as MCP's authorization specification has it (registering dsh with the
	// server's authorization server) once the server asks.
	OAuth *MCPOAuth
}

// MCPOAuth is a server's `oauth` table: a client registered with its
// authorization server beforehand, and what to ask for.
type MCPOAuth struct {
	ClientID     string   // client_id: a client registered beforehand
	ClientSecret string   // client_secret (${VAR} is expanded)
	Scopes       []string // scopes: what to ask for when the server does not say
	CallbackPort int      // callback_port: the loopback port the sign-in returns to (0: any)
	// ClientMetadataURL (client_metadata_url) is an https URL where dsh's
	// client metadata document is published, used as the client ID where the
	// authorization server accepts one.
	ClientMetadataURL string
	// ClientCredentials (grant = "client_credentials"): no user signs in; the
	// client's own ID and secret, or a JWT signed with its private key, get
	// the token.
	ClientCredentials bool
	// PrivateKeyFile (private_key_file): the PEM key (EC P-256 or RSA) a
	// client credentials grant signs its assertion with (private_key_jwt).
	PrivateKeyFile string
}

// ContextWindows overrides the model's context window in tokens: for every
// model (All) or per model name.
type ContextWindows struct {
	All      int64
	PerModel map[string]int64
}

// For returns the override for model, if any.
func (w ContextWindows) For(model string) (int64, bool) {
	if n, ok := w.PerModel[model]; ok {
		return n, true
	}
	return w.All, w.All > 0
}

// Flags are the command-line settings; empty means not given. Each field's flag
// is named in the setting's source (Provider: --provider, …).
type Flags struct {
	Provider, BaseURL, Model, FallbackModel, Mode, Sandbox, Thinking string
}

// Setting is one effective setting and where it came from: a file path, "flag
// --model", "environment ANTHROPIC_API_KEY" or "default".
type Setting struct {
	Key, Value, Source string
}

// Load reads the user's and the project's files (either may be missing) and
// resolves the settings against the environment read through getenv.
func Load(projectRoot string, getenv func(string) string) (Config, error) {
	c := Config{getenv: getenv, layers: map[string][]candidate{}, sources: map[string]string{}}
	var trusted []string
	var decisions map[string]Decision
	projectTrusted := false
	mcp := map[string]MCPServer{}
	if path := UserPath(getenv); path != "" {
		f := File{Path: path, Scope: "user"}
		d, exists, err := readFile(path, "", getenv)
		if err != nil {
			return Config{}, err
		}
		f.Exists = exists
		c.Files = append(c.Files, f)
		if exists {
			trusted, decisions = d.TrustedProjects, d.projects
			c.merge(d, path, true, mcp)
		}
	}
	if projectRoot != "" {
		path := filepath.Join(projectRoot, ".dsh", "config.toml")
		f := File{Path: path, Scope: "project", Trusted: isTrusted(projectRoot, trusted, getenv)}
		d, exists, err := readFile(path, projectRoot, getenv)
		if err != nil {
			return Config{}, err
		}
		f.Exists = exists
		if exists {
			for _, key := range []string{"trusted_projects", "projects", "api_key_store"} {
				if _, ok := d.lines[key]; ok {
					return Config{}, fmt.Errorf("%s:%d: %s belongs in the user's file (%s), not the project's",
						path, d.lines[key], key, UserPath(getenv))
				}
			}
			// The answer to "Trust this folder?" covers the project's Claude
			// Code settings and its hooks' scripts too: hooks added to them, or
			// a script changed, later are asked about anew.
			d.sum, _ = trustSum(d.sum, projectRoot, d.hooks)
			f.SHA256 = d.sum
			c.decide(&f, decisions[canonical(projectRoot, getenv)], "the project's settings ("+path+
				", .claude/settings.json, .mcp.json or a script their hooks or servers run)")
			c.merge(d, path, f.Trusted, mcp)
		} else if sum, settings := trustSum("", projectRoot, nil); sum != "" {
			// Only Claude Code's settings: their hooks are asked about as a
			// config.toml's settings are, by their hash.
			f.Claude, f.SHA256 = true, sum
			f.mcpOnly = !settings
			c.decide(&f, decisions[canonical(projectRoot, getenv)], "the project's Claude Code settings (.claude/settings.json, .mcp.json or a script their hooks or servers run)")
		} else {
			// Neither: the answer is about the folder itself (its language
			// servers), given while it had no such file.
			dec, answered := decisions[canonical(projectRoot, getenv)]
			f.Decided = f.Trusted || (answered && dec.SHA256 == "")
			f.Trusted = f.Trusted || (answered && dec.Trusted && dec.SHA256 == "")
		}
		c.Files = append(c.Files, f)
		projectTrusted = f.Trusted
	}
	c.loadClaude(projectRoot, projectTrusted)
	if err := c.loadRules(); err != nil {
		return Config{}, err
	}
	for _, name := range sortedKeys(mcp) {
		c.MCP = append(c.MCP, mcp[name])
	}
	c.resolve()
	return c, nil
}

// decide applies the user's answer dec (zero: none) to the project file f,
// whose hash sum is set: an answer holds for the files it was given for, and
// a trusted project whose files changed since is untrusted, and told so.
func (c *Config) decide(f *File, dec Decision, what string) {
	answered := dec.SHA256 != ""
	f.Decided = f.Trusted || (answered && dec.SHA256 == f.SHA256)
	if !f.Trusted && answered && dec.Trusted {
		f.Trusted = dec.SHA256 == f.SHA256
		f.Changed = !f.Trusted
	}
	if f.Changed {
		c.Notices = append(c.Notices, fmt.Sprintf("%s changed since you trusted it: what needs trust is ignored until you trust it again", what))
	}
}

// UserPath is the user's configuration file: $XDG_CONFIG_HOME/dsh/config.toml,
// else ~/.config/dsh/config.toml; "" when neither variable helps. A relative
// XDG_CONFIG_HOME is ignored, as the XDG specification says.
func UserPath(getenv func(string) string) string {
	if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "dsh", "config.toml")
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".config", "dsh", "config.toml")
	}
	return ""
}

// merge lays one file's settings over the ones before it.
func (c *Config) merge(d *fileData, path string, trusted bool, mcp map[string]MCPServer) {
	ignore := func(key, why string) {
		c.Notices = append(c.Notices, fmt.Sprintf("%s:%d: %s ignored: %s; to allow it, trust the project (the chat asks; or list it in trusted_projects in the user's file)",
			path, d.lines[key], key, why))
	}
	set := func(key string, v *string) {
		if v != nil {
			c.layers[key] = append(c.layers[key], candidate{*v, path})
		}
	}
	set("provider", d.Provider)
	set("openai_api", d.OpenAIAPI)
	set("notify", d.notify)
	set("api_key_store", d.apiKeyStore)
	set("model", d.Model)
	set("fallback_model", d.FallbackModel)
	switch {
	case d.thinking == nil || trusted:
		set("thinking", d.thinking)
	default:
		ignore("thinking", "a project file may not choose how much the model thinks (what the API key pays for)")
	}
	switch {
	case d.BaseURL == nil || trusted:
		set("base_url", d.BaseURL)
	default:
		ignore("base_url", "a project file may not choose where the API key is sent")
	}
	switch {
	case d.Mode == nil || trusted || *d.Mode == "default" || *d.Mode == "read-only":
		set("mode", d.Mode)
	default:
		ignore("mode", "a project file may only choose the default or read-only mode")
	}
	switch {
	case d.Sandbox == nil || trusted || *d.Sandbox != "off":
		set("sandbox", d.Sandbox)
	default:
		ignore("sandbox", "a project file may not turn the sandbox off")
	}
	if d.SafeCommands != nil {
		if trusted {
			c.SafeCommands = append(c.SafeCommands, d.SafeCommands...)
			c.SafeCommands = slices.Compact(slices.Sorted(slices.Values(c.SafeCommands)))
			c.sources["safe_commands"] = joinSource(c.sources["safe_commands"], path)
		} else {
			ignore("safe_commands", "a project file may not let commands run without asking")
		}
	}
	if d.CheckpointExclude != nil {
		if trusted {
			c.CheckpointExclude = slices.Compact(slices.Sorted(slices.Values(append(c.CheckpointExclude, d.CheckpointExclude...))))
			c.sources["checkpoint_exclude"] = joinSource(c.sources["checkpoint_exclude"], path)
		} else {
			ignore("checkpoint_exclude", "a project file may not leave files out of what /undo can restore")
		}
	}
	c.addRules(d.permissions, path, path != UserPath(c.getenv), trusted)
	if d.AdditionalDirs != nil {
		if trusted {
			c.AdditionalDirs = slices.Compact(slices.Sorted(slices.Values(append(c.AdditionalDirs, d.AdditionalDirs...))))
			c.sources["additional_directories"] = joinSource(c.sources["additional_directories"], path)
		} else {
			ignore("additional_directories", "a project file may not widen where the agent works")
		}
	}
	if d.contextWindow != nil && !trusted {
		ignore("context_window", "a project file may not choose when the context is compacted")
	}
	if d.contextWindow != nil && trusted {
		w := d.contextWindow
		if w.All > 0 {
			c.ContextWindow.All = w.All
			c.sources["context_window"] = path
		}
		for m, n := range w.PerModel {
			if c.ContextWindow.PerModel == nil {
				c.ContextWindow.PerModel = map[string]int64{}
			}
			c.ContextWindow.PerModel[m] = n
			c.sources["context_window."+m] = path
		}
	}
	c.mergeNetwork(d.network, path)
	switch {
	case d.lsp == nil:
	case trusted:
		c.mergeLSP(d.lsp, path)
	default:
		ignore("lsp", "a project file may not start programs")
	}
	for _, n := range d.hookNotes {
		c.Notices = append(c.Notices, path+": "+n)
	}
	switch {
	case len(d.hooks) == 0:
	case trusted:
		for _, h := range d.hooks {
			h.Source = path
			c.addHooks([]Hook{h})
		}
	default:
		ignore("hooks", "a project file may not run commands")
	}
	for _, name := range sortedKeys(d.MCP) {
		if !trusted {
			ignore("mcp."+name, "a project file may not start programs or connect to servers")
			continue
		}
		mcp[name] = d.MCP[name]
		c.sources["mcp."+name] = path
	}
}

func joinSource(old, path string) string {
	if old == "" {
		return path
	}
	return old + " + " + path
}

// WithFlags lays the command-line settings over c.
func (c Config) WithFlags(f Flags) (Config, error) {
	layers := map[string][]candidate{}
	for k, v := range c.layers {
		layers[k] = slices.Clone(v)
	}
	c.layers = layers
	for _, kv := range []struct{ key, flag, value string }{
		{"provider", "--provider", f.Provider},
		{"base_url", "--base-url", f.BaseURL},
		{"model", "--model", f.Model},
		{"fallback_model", "--fallback-model", f.FallbackModel},
		{"mode", "--mode", f.Mode},
		{"sandbox", "--sandbox", f.Sandbox},
		{"thinking", "--thinking", f.Thinking},
	} {
		if kv.value == "" {
			continue
		}
		if err := validateScalar(kv.key, kv.value); err != nil {
			return Config{}, fmt.Errorf("%s: %w", kv.flag, err)
		}
		c.layers[kv.key] = append(c.layers[kv.key], candidate{kv.value, "flag " + kv.flag})
	}
	c.resolve()
	return c, nil
}

// resolve sets the exported scalar fields from the layers and the environment.
func (c *Config) resolve() {
	top := func(key string) string {
		l := c.layers[key]
		if len(l) == 0 {
			return ""
		}
		return l[len(l)-1].value
	}
	c.Provider = top("provider")
	if c.Provider == "" {
		c.Provider, _ = c.envProvider()
	}
	c.Model, c.Mode, c.Sandbox, c.Thinking = top("model"), top("mode"), top("sandbox"), top("thinking")
	c.Notify, c.FallbackModel = top("notify"), top("fallback_model")
	c.APIKeyStore = top("api_key_store")
	c.OpenAIAPI = top("openai_api")
	c.envThinking = false
	if c.Thinking == "" && (c.Provider == "anthropic" || c.Provider == "bedrock" || c.Provider == "vertex") {
		// Claude Code's budget for Claude, when nothing here chooses one.
		if n, err := strconv.Atoi(strings.TrimSpace(c.env("MAX_THINKING_TOKENS"))); err == nil && n >= 1024 {
			c.Thinking, c.envThinking = strconv.Itoa(n), true
		}
	}
	c.BaseURL, c.envBaseURL = top("base_url"), ""
	if l := c.layers["base_url"]; len(l) == 0 || !strings.HasPrefix(l[len(l)-1].source, "flag ") {
		if name := providers.BaseURLEnv(c.Provider); name != "" && c.env(name) != "" {
			c.BaseURL, c.envBaseURL = c.env(name), name
		}
	}
}

func (c *Config) env(name string) string {
	if c.getenv == nil {
		return ""
	}
	return c.getenv(name)
}

// envProvider infers the provider from the environment the way the providers
// package does, and names the variable that decided it.
func (c *Config) envProvider() (string, string) { return providers.Chosen(c.env) }

// Settings lists every effective setting with its source, in a fixed order.
// Secrets (the API key, env and header values of MCP servers) are never shown.
func (c Config) Settings() []Setting {
	var out []Setting
	scalar := func(key, value string) {
		s := Setting{Key: key, Value: value, Source: "default"}
		if l := c.layers[key]; len(l) > 0 {
			s.Source = l[len(l)-1].source
		}
		out = append(out, s)
	}
	scalar("provider", c.Provider)
	if len(c.layers["provider"]) == 0 {
		if _, env := c.envProvider(); env != "" {
			out[len(out)-1].Source = "environment " + env
		}
	}
	scalar("base_url", redactURL(c.BaseURL))
	if c.envBaseURL != "" {
		out[len(out)-1].Source = "environment " + c.envBaseURL
	}
	if env := providers.KeyEnv(c.Provider); env != "" {
		s := Setting{Key: "api_key", Value: "(not set)", Source: "environment " + env}
		if c.env(env) != "" {
			s.Value = "(set)"
		}
		out = append(out, s)
	}
	if c.OpenAIAPI != "" || c.Provider == "openai" || c.Provider == "azure" {
		scalar("openai_api", c.OpenAIAPI)
	}
	scalar("model", c.Model)
	scalar("fallback_model", c.FallbackModel)
	scalar("mode", c.Mode)
	scalar("sandbox", c.Sandbox)
	scalar("thinking", c.Thinking)
	if c.envThinking {
		out[len(out)-1].Source = "environment MAX_THINKING_TOKENS"
	}
	scalar("notify", c.Notify)
	scalar("api_key_store", c.APIKeyStore)
	cw := Setting{Key: "context_window", Source: "default"}
	if c.ContextWindow.All > 0 {
		cw.Value, cw.Source = strconv.FormatInt(c.ContextWindow.All, 10), c.sources["context_window"]
	}
	out = append(out, cw)
	for _, m := range sortedKeys(c.ContextWindow.PerModel) {
		out = append(out, Setting{Key: "context_window." + m, Value: strconv.FormatInt(c.ContextWindow.PerModel[m], 10),
			Source: c.sources["context_window."+m]})
	}
	sc := Setting{Key: "safe_commands", Source: "default"}
	if len(c.SafeCommands) > 0 {
		sc.Value, sc.Source = strings.Join(c.SafeCommands, ", "), c.sources["safe_commands"]
	}
	out = append(out, sc)
	ad := Setting{Key: "additional_directories", Source: "default"}
	if len(c.AdditionalDirs) > 0 {
		ad.Value, ad.Source = strings.Join(c.AdditionalDirs, ", "), c.sources["additional_directories"]
	}
	out = append(out, ad)
	for _, r := range c.Permissions {
		out = append(out, Setting{Key: "permissions." + r.Effect, Value: r.Rule, Source: r.Source})
	}
	ce := Setting{Key: "checkpoint_exclude", Source: "default"}
	if len(c.CheckpointExclude) > 0 {
		ce.Value, ce.Source = strings.Join(c.CheckpointExclude, ", "), c.sources["checkpoint_exclude"]
	}
	out = append(out, ce)
	out = append(out, c.networkSettings()...)
	for _, s := range c.MCP {
		out = append(out, Setting{Key: "mcp." + s.Name, Value: s.Describe(), Source: c.sources["mcp."+s.Name]})
	}
	if src, ok := c.sources["lsp"]; ok {
		out = append(out, Setting{Key: "lsp", Value: c.LSP.describe(), Source: src})
	}
	if len(c.Hooks) > 0 {
		var srcs []string
		for _, h := range c.Hooks {
			if !slices.Contains(srcs, h.Source) {
				srcs = append(srcs, h.Source)
			}
		}
		out = append(out, Setting{Key: "hooks", Value: describeHooks(c.Hooks), Source: strings.Join(srcs, " + ")})
	}
	return out
}

// Describe shows a server without its secrets: env and header names only.
func (s MCPServer) Describe() string {
	var b strings.Builder
	b.WriteString(s.Type + " ")
	if s.Type == "stdio" {
		b.WriteString(strings.Join(append([]string{s.Command}, s.Args...), " "))
		if len(s.Env) > 0 {
			b.WriteString(" (env " + strings.Join(sortedKeys(s.Env), ", ") + ")")
		}
	} else {
		b.WriteString(redactURL(s.URL))
		if len(s.Headers) > 0 {
			b.WriteString(" (headers " + strings.Join(sortedKeys(s.Headers), ", ") + ")")
		}
	}
	if s.OAuth != nil && s.OAuth.ClientID != "" {
		b.WriteString(" (oauth client " + s.OAuth.ClientID + ")")
	}
	if s.Trusted {
		b.WriteString(" (trusted: its read-only hints are believed)")
	}
	return b.String()
}

// redactURL hides the credentials a URL carries in its user info
// (https://user:password@host, or a token as the user name).
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	} else {
		u.User = url.User("xxxxx")
	}
	return u.String()
}

// ParseThinking reads a thinking setting: budget is a token budget (0 when off
// or a level), adaptive reports "adaptive", level an effort level.
func ParseThinking(s string) (budget int, level string, err error) {
	switch s {
	case "", "off":
		return 0, "", nil
	case "adaptive", "low", "medium", "high", "xhigh", "max":
		return 0, s, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1024 {
		return 0, "", fmt.Errorf("thinking: want off, adaptive, low, medium, high, xhigh, max or a budget of at least 1024 tokens, got %q", s)
	}
	return n, "", nil
}

// nameRE and modeRE are compiled on first use: their counted repetitions
// make them the costliest of dsh's package initialisations otherwise.
var (
	nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })
	modeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z-]{0,31}$`) })
)

// validateScalar checks one scalar setting's value, whatever set it.
func validateScalar(key, v string) error {
	switch key {
	case "provider":
		if !slices.Contains(providers.Names(), v) {
			return fmt.Errorf("provider: want one of %s, got %q", strings.Join(providers.Names(), ", "), v)
		}
	case "openai_api":
		if v != "chat" && v != "responses" {
			return fmt.Errorf("openai_api: want chat or responses, got %q", v)
		}
	case "base_url":
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("base_url: want an http or https URL, got %q", v)
		}
	case "model", "fallback_model":
		if strings.TrimSpace(v) == "" || strings.ContainsAny(v, "\n\r") {
			return fmt.Errorf("%s: want a model name, got %q", key, v)
		}
	case "mode":
		if !modeRE().MatchString(v) {
			return fmt.Errorf("mode: want a permission mode name such as default, accept-edits, bypass or read-only, got %q", v)
		}
	case "sandbox":
		if v != "off" && v != "on" && v != "network-off" {
			return fmt.Errorf("sandbox: want off, on or network-off, got %q", v)
		}
	case "thinking":
		if _, _, err := ParseThinking(v); err != nil {
			return err
		}
	default:
		return errors.New("unknown setting " + key)
	}
	return nil
}

// isTrusted reports whether the user's trusted_projects lists root (both sides
// cleaned, ~ expanded and symlinks resolved, so an alias cannot slip past).
func isTrusted(root string, trusted []string, getenv func(string) string) bool {
	r := canonical(root, getenv)
	for _, t := range trusted {
		if r != "" && canonical(t, getenv) == r {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
