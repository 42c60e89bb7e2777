// Package settings is the one place a session's settings are resolved: the
// user's and the project's configuration files (with the project's trust
// rules), the command line and the environment, into the host's options. Every
// command that opens a session (dsh, dsh run, dsh tool, dsh acp) and dsh config,
// which prints what such a session would use, goes through Resolve, so they
// cannot disagree.
package settings

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/agents"
	"github.com/dsh-dev/dsh/internal/command"
	"github.com/dsh-dev/dsh/internal/config"
	"github.com/dsh-dev/dsh/internal/control"
	"github.com/dsh-dev/dsh/internal/credentials"
	"github.com/dsh-dev/dsh/internal/hooks"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/lsp"
	"github.com/dsh-dev/dsh/internal/mcp"
	"github.com/dsh-dev/dsh/internal/netproxy"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/models"
	"github.com/dsh-dev/dsh/internal/provider/providers"
	"github.com/dsh-dev/dsh/internal/rules"
	"github.com/dsh-dev/dsh/internal/sandbox"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/skills"
	"github.com/dsh-dev/dsh/internal/telemetry"
)

// Input is what a command knows before it opens a session: the directory, the
// environment and the command line.
type Input struct {
	Cwd    string
	Getenv func(string) string
	Flags  config.Flags // --provider, --base-url, --model, --mode, --sandbox, --thinking
	// Script is --script FILE, the script provider's turns; alone it chooses
	// that provider.
	Script       string
	SessionDir   string // --session-dir
	AllowOutside bool   // --allow-outside
	// AddDirs are --add-dir's directories, beside the configuration's
	// additional_directories.
	AddDirs []string
	Version string // dsh's, reported to MCP servers
	// NoModel says the command talks to no model (dsh tool): no model is
	// chosen, so no provider is asked for its list.
	NoModel bool
	// Logger gets what Resolve could not find out and worked around (the
	// model list of a server that did not answer); nil discards it.
	Logger *slog.Logger
	// ExportEnv puts the env of Claude Code's user settings into this
	// process's environment, which commands, hooks and MCP servers inherit
	// (their secrets scrubbed as any), as Claude Code's do: for the process
	// that runs sessions, not for a test's.
	ExportEnv bool
}

// Settings are what a session in Input.Cwd uses.
type Settings struct {
	Config  config.Config // the files and the layers, for dsh config
	Mode    agent.Mode
	Sandbox sandbox.Mode
	// Model is the model in force, named even when no file or flag names it
	// (the provider's default, or the first a local server serves); "" when no
	// provider is configured.
	Model       string
	modelSource string
	SessionDir  string
	// Roots are the further directories sessions work in (--add-dir, then
	// the configuration's), absolute and checked.
	Roots []string
	rules *rules.Set

	in            Input
	getenv        func(string) string // the environment with the configuration's base URL
	plugins       plugins             // what the enabled plugins add
	claudeMCP     []mcp.ServerConfig  // Claude Code's MCP servers for the project (see claudeMCP)
	claudeMCPFrom map[string]string   // the file each came from
	claude        claudeSettings      // what Claude Code's settings files say
}

// Notify says whether the chat notifies when a turn ends or a prompt waits
// while its terminal is in the background (on unless the config turns it off).
func (s Settings) Notify() bool { return s.Config.Notify != "false" }

// FlagError is a mistake in the command line.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// modelWait bounds asking an OpenAI-compatible server which model it serves.
const modelWait = 5 * time.Second

// Resolve reads the configuration for in.Cwd and lays the flags and the
// environment over it. A bad file or flag is an error; so is a sandbox that is
// asked for but cannot work here (commands would run unconfined).
func Resolve(ctx context.Context, in Input) (Settings, error) {
	if in.Logger == nil {
		in.Logger = slog.New(slog.DiscardHandler)
	}
	if in.Script != "" && in.Flags.Provider == "" {
		in.Flags.Provider = "script"
	}
	// Claude Code's user settings may set variables, as for every Claude
	// Code session; a provider key the environment lacks may be in the
	// user's credentials file (dsh login). Both are read as if they were set.
	cenv, notice := readClaudeSettings(in.Cwd, in.Getenv)
	env := credentials.Env(cenv.over(in.Getenv))
	cfg, err := config.Load(in.Cwd, env)
	if err != nil {
		return Settings{}, err
	}
	if cfg, err = cfg.WithFlags(in.Flags); err != nil {
		return Settings{}, &FlagError{err}
	}
	if notice != "" {
		cfg.Notices = append(cfg.Notices, notice)
	}
	if in.ExportEnv {
		for k, v := range cenv.vars {
			if err := os.Setenv(k, v); err != nil {
				cfg.Notices = append(cfg.Notices, fmt.Sprintf("%s: env.%s: %v", cenv.path, k, err))
			}
		}
	}
	s := Settings{Config: cfg, Mode: agent.ModeDefault, in: in, claude: cenv, getenv: configEnv(env, cfg)}
	if cfg.Mode != "" {
		if s.Mode, err = agent.ParseMode(cfg.Mode); err != nil {
			return Settings{}, s.wrap("mode", err)
		}
	}
	if cfg.Sandbox != "" {
		if err := s.Sandbox.Set(cfg.Sandbox); err != nil {
			return Settings{}, s.wrap("sandbox", err)
		}
	}
	if s.Sandbox.Enabled() {
		if err := sandbox.Check(s.Sandbox); err != nil {
			return Settings{}, fmt.Errorf("the sandbox (%s) cannot work here: %w", s.Sandbox, err)
		}
	}
	if budget, _, _ := config.ParseThinking(cfg.Thinking); budget > 0 && (cfg.Provider == "openai" || cfg.Provider == "azure") {
		return Settings{}, s.wrap("thinking", fmt.Errorf("thinking: %s is a token budget, which only Anthropic takes; OpenAI-compatible servers take an effort level (low … max)", cfg.Thinking))
	}
	if s.SessionDir, err = session.Dir(in.SessionDir); err != nil {
		return Settings{}, err
	}
	if s.Roots, err = s.roots(); err != nil {
		return Settings{}, err
	}
	var notes []string
	s.rules, notes = ruleSet(cfg.Permissions, in.Cwd, in.Getenv)
	s.Config.Notices = append(s.Config.Notices, notes...)
	if !in.NoModel {
		s.Model, s.modelSource = s.chooseModel(ctx)
	}
	s.plugins = loadPlugins(in.Cwd, s.getenv, s.trusted(), cfg.ClaudeHooksOff)
	s.Config.Notices = append(s.Config.Notices, s.plugins.notices...)
	s.claudeMCP, s.claudeMCPFrom, notes = claudeMCP(in.Cwd, s.getenv, s.trusted(), s.claude.declined)
	s.Config.Notices = append(s.Config.Notices, notes...)
	return s, nil
}

// roots resolves --add-dir's directories and the configuration's: relative
// ones are the session directory's, ~/ the home's; each must be a directory.
func (s Settings) roots() ([]string, error) {
	var out []string
	add := func(d, from string, flag bool) error {
		p := d
		if rest, ok := strings.CutPrefix(d, "~/"); ok && s.in.Getenv("HOME") != "" {
			p = filepath.Join(s.in.Getenv("HOME"), rest)
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.in.Cwd, p)
		}
		fi, err := os.Stat(p)
		if err == nil && !fi.IsDir() {
			err = errors.New("not a directory")
		}
		if err != nil {
			err = fmt.Errorf("%s %s: %w", from, d, err)
			if flag {
				return &FlagError{err}
			}
			return err
		}
		if p = filepath.Clean(p); p != filepath.Clean(s.in.Cwd) && !slices.Contains(out, p) {
			out = append(out, p)
		}
		return nil
	}
	for _, d := range s.in.AddDirs {
		if err := add(d, "--add-dir", true); err != nil {
			return nil, err
		}
	}
	for _, d := range s.Config.AdditionalDirs {
		if err := add(d, "additional_directories ("+s.source("additional_directories")+")", false); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// wrap names where a bad setting came from; one from a flag is a FlagError.
func (s Settings) wrap(key string, err error) error {
	src := s.source(key)
	if strings.HasPrefix(src, "flag ") {
		return &FlagError{fmt.Errorf("%s: %w", strings.TrimPrefix(src, "flag "), err)}
	}
	return fmt.Errorf("%s (%s): %w", key, src, err)
}

// source is where the configuration's key came from.
func (s Settings) source(key string) string {
	for _, st := range s.Config.Settings() {
		if st.Key == key {
			return st.Source
		}
	}
	return "default"
}

// chooseModel names the model a session starts with: the configured one, else
// the first an OpenAI-compatible server serves (not OpenAI's default, which
// such a server does not have), else the provider's default.
func (s Settings) chooseModel(ctx context.Context) (model, source string) {
	if s.Config.Model != "" {
		return s.Config.Model, s.source("model")
	}
	if s.Config.Provider == "" {
		return "", "default"
	}
	claude := s.Config.Provider == "anthropic" || s.Config.Provider == "bedrock" || s.Config.Provider == "vertex"
	if m, from := s.claude.model, s.claude.modelFrom; claude && m != "" && s.getenv("ANTHROPIC_MODEL") == "" {
		// Claude Code's settings' model, under ANTHROPIC_MODEL as there.
		m = models.ClaudeAlias(m)
		if s.Config.Provider == "bedrock" {
			m = models.BedrockModel(m)
		}
		return m, from + " (model)"
	}
	ctx, cancel := context.WithTimeout(ctx, modelWait)
	defer cancel()
	model, source, err := providers.DefaultModel(ctx, s.Config.Provider, s.getenv)
	if err != nil {
		s.in.Logger.Warn("choosing a model", "err", err)
	}
	return model, source
}

// Options are the host options of a session in Input.Cwd. The caller adds
// what is its own: Ask, Now, Warn, MCPNotice, and an editor's MCP servers.
func (s Settings) Options() host.Options {
	cfg := s.Config
	o := host.Options{
		SessionDir:        s.SessionDir,
		Root:              s.in.Cwd,
		Roots:             s.Roots,
		Rules:             s.rules,
		EditRules:         s.editRules,
		AllowOutside:      s.in.AllowOutside,
		KeepEnv:           KeepEnv(s.in.Getenv),
		Mode:              s.Mode,
		NoBypass:          cfg.NoBypass,
		Sandbox:           s.Sandbox,
		SafeCommands:      cfg.SafeCommands,
		CheckpointExclude: cfg.CheckpointExclude,
		Model:             s.Model,
		FallbackModel:     cfg.FallbackModel,
		Thinking:          cfg.Thinking,
		Provider:          s.provider,
		Models:            s.models,
		MCP:               firstByName(mcpServers(cfg), s.claudeMCP, s.plugins.mcp), // dsh's own first, then Claude Code's
		MCPTokens:         &credentials.MCPTokens{Path: credentials.MCPTokensPath(s.in.Getenv)},
		LSP:               lsp.Config{Wait: cfg.LSP.Wait, Servers: lspServers(cfg.LSP.Servers), Trust: s.lspTrust()},
		SkillDirs:         append(s.skillDirs(), s.plugins.skills...),
		CommandDirs:       append(s.commandDirs(), s.plugins.commands...),
		Hooks:             hookList(slices.Concat(cfg.Hooks, s.plugins.hooks)),
		AgentDirs:         append(s.agentDirs(), s.plugins.agents...),
		Version:           s.in.Version,
		Telemetry:         telemetry.FromEnv(s.in.Getenv),
		// Every live session can be joined by another client (dsh attach,
		// the web page) over its control socket.
		Live: control.Serve,
	}
	if r := cfg.Network.Rules(); r.Filtered() {
		o.Network = netproxy.New(r, s.in.Getenv)
	}
	// Per model: the window follows /model, and the meter and compaction use it.
	o.ContextWindows = cfg.ContextWindow.For
	if w, ok := cfg.ContextWindow.For(s.Model); ok {
		o.ContextWindow = w
	}
	return o
}

// hookList is the configuration's hooks as the hooks package runs them.
func hookList(cfg []config.Hook) []hooks.Hook {
	out := make([]hooks.Hook, 0, len(cfg))
	for _, h := range cfg {
		out = append(out, hooks.Hook{Event: hooks.Event(h.Event), Matcher: h.Matcher, Type: h.Type, Command: h.Command, Prompt: h.Prompt,
			URL: h.URL, Headers: h.Headers, AllowedEnvVars: h.AllowedEnvVars, Timeout: h.Timeout, Source: h.Source, Env: h.Env})
	}
	return out
}

// lspTrust is the project's trust as its language servers take it: the
// answer to "Trust this folder?" (trusted_projects, or the user's answer for
// the project's file as it is, or for the folder without one), and how to
// record a yes given when a server would first start.
func (s Settings) lspTrust() *lsp.Trust {
	var proj config.File
	for _, f := range s.Config.Files {
		if f.Scope == "project" {
			proj = f
		}
	}
	also := ""
	if f, ok := s.Project(); ok && len(s.Ignored()) > 0 {
		also = f.Named() + " set what is ignored now, from the next session on"
	}
	cwd, getenv, sum := s.in.Cwd, s.in.Getenv, proj.SHA256
	record := func() error { return config.RecordTrust(getenv, cwd, sum, true) }
	return lsp.NewTrust(proj.Trusted, proj.Decided && !proj.Trusted, record, also)
}

// lspServers are the configuration's language servers as the client takes them.
func lspServers(cfg map[string]config.LSPServer) map[string]lsp.Server {
	out := make(map[string]lsp.Server, len(cfg))
	for name, s := range cfg {
		out[name] = lsp.Server{Command: s.Command, Disabled: s.Disabled}
	}
	return out
}

// mcpServers are the configuration's MCP servers as the MCP client takes them.
func mcpServers(cfg config.Config) []mcp.ServerConfig {
	var out []mcp.ServerConfig
	for _, s := range cfg.MCP {
		out = append(out, mcp.ServerConfig(s))
	}
	return out
}

// provider builds the provider. The host calls it when a prompt first needs
// it, so an editor can open and replay sessions without a key, and a missing
// key is reported on the prompt, saying what to set.
func (s Settings) provider() (provider.Provider, error) {
	if s.Config.Provider == "" && !providers.Keyed(s.getenv) {
		return nil, providers.ErrNoProvider
	}
	// With no provider named, one whose key arrived since the settings were
	// resolved (dsh login) is chosen as FromEnv chooses.
	return providers.FromEnv(s.getenv, providers.Flags{Provider: s.Config.Provider, Model: s.Model, Script: s.in.Script, OpenAIAPI: s.Config.OpenAIAPI})
}

// CheckProvider builds the provider once, for commands that fail before
// logging a session when it cannot be built (dsh run).
func (s Settings) CheckProvider() error {
	_, err := s.provider()
	return err
}

// CheckPrice says whether a budget in dollars can be kept: the model's price,
// and the fallback model's, must be known.
func (s Settings) CheckPrice() error {
	if s.Model == "" {
		return errors.New("the price of the provider's default model is not known; name a model with --model")
	}
	for _, m := range []string{s.Model, s.Config.FallbackModel} {
		if m != "" && !models.Lookup(m).Priced {
			return fmt.Errorf("the price of %s is not known, so its cost cannot be counted", m)
		}
	}
	return nil
}

// models lists the provider's models (the built-in list when the provider
// cannot be asked).
func (s Settings) models(ctx context.Context) ([]models.Info, error) {
	return providers.Models(ctx, s.Config.Provider, s.getenv)
}

// configEnv reads the environment with the configuration's base URL in the
// provider's variable, which is where the providers read it.
func configEnv(getenv func(string) string, cfg config.Config) func(string) string {
	return func(k string) string {
		if cfg.BaseURL != "" && k == providers.BaseURLEnv(cfg.Provider) && k != "" {
			return cfg.BaseURL
		}
		return getenv(k)
	}
}

// KeepEnv is DSH_KEEP_ENV: the credentials commands may still see.
func KeepEnv(getenv func(string) string) []string {
	var out []string
	for _, s := range strings.Split(getenv("DSH_KEEP_ENV"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// trusted says the user trusts the project (trusted_projects, or their
// answer for its files as they are).
func (s Settings) trusted() bool {
	return slices.ContainsFunc(s.Config.Files, func(f config.File) bool { return f.Scope == "project" && f.Trusted })
}

// StatusLine is Claude Code's statusLine command: the user's, or a trusted
// project's (a repository's would be a command it runs). Options leaves it
// out: only a session whose status line is shown (the chat's, the web
// page's) runs it.
func (s Settings) StatusLine() string {
	if s.claude.statusLine != "" && s.trusted() {
		return s.claude.statusLine
	}
	return s.claude.userStatusLine
}

// skillDirs are where the session's skills are found, the project's trusted
// when the project is.
func (s Settings) skillDirs() []skills.Dir {
	dirs := skills.Dirs(s.in.Cwd, s.in.Getenv)
	for i := range dirs {
		dirs[i].Trusted = dirs[i].Root != "" && s.trusted()
	}
	return dirs
}

// commandDirs are where the session's custom commands are found, the
// project's trusted when the project is.
func (s Settings) commandDirs() []command.Dir {
	dirs := command.Dirs(s.in.Cwd, s.in.Getenv)
	for i := range dirs {
		dirs[i].Trusted = dirs[i].Root != "" && s.trusted()
	}
	return dirs
}

// agentDirs are where the session's custom agents are found, the project's
// trusted when the project is.
func (s Settings) agentDirs() []agents.Dir {
	dirs := agents.Dirs(s.in.Cwd, s.in.Getenv)
	for i := range dirs {
		dirs[i].Trusted = dirs[i].Root != "" && s.trusted()
	}
	return dirs
}

// Ignored are the project's settings that were not applied, and why.
func (s Settings) Ignored() []string { return s.Config.Notices }

// Project is the project's configuration file (or, without one, its Claude
// Code settings); ok is false when it has neither.
func (s Settings) Project() (f config.File, ok bool) {
	for _, f := range s.Config.Files {
		if f.Scope == "project" && (f.Exists || f.Claude) {
			return f, true
		}
	}
	return config.File{}, false
}

// whence is where a value said to come from the environment really came
// from: Claude Code's settings' env, or dsh login's credentials file.
func (s Settings) whence(src string) string {
	env, ok := strings.CutPrefix(src, "environment ")
	switch {
	case !ok:
		return src
	case hasKey(s.claude.vars, env):
		return s.claude.path + " (env." + env + ")"
	case env == providers.KeyHelperEnv && s.in.Getenv(env) == "":
		return s.claude.path + " (apiKeyHelper)"
	case env == providers.CredentialExportEnv && s.in.Getenv(env) == "":
		return s.claude.path + " (awsCredentialExport)"
	case slices.Contains(credentials.Names, env) && s.in.Getenv(env) == "":
		return "credentials " + credentials.Path(s.in.Getenv) + " (" + env + ")"
	}
	return src
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}

// Entries lists every value a session would use, each with its source: a
// file's path, "flag --NAME", "environment NAME" or "default …". Secrets are
// never shown.
func (s Settings) Entries() []config.Setting {
	var out []config.Setting
	for _, st := range s.Config.Settings() {
		switch st.Key {
		case "provider":
			if st.Value == "" {
				st.Value = "(none: set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL)"
			}
		case "model":
			st.Value, st.Source = s.Model, s.modelSource
			if st.Value == "" {
				st.Value = "(none: no provider)"
			}
		case "mode":
			st.Value = string(s.Mode)
		case "sandbox":
			if st.Value = string(s.Sandbox); st.Value == "" {
				st.Value = "off"
			}
		case "thinking":
			if st.Value == "" {
				st.Value, st.Source = "(the provider's: off)", "default"
			}
		case "context_window":
			if st.Value == "" {
				if s.Model == "" {
					st.Value, st.Source = "(the model's, once a provider is set)", "default"
				} else {
					w := models.Lookup(s.Model).ContextWindow
					st.Value, st.Source = strconv.FormatInt(w, 10), "default (the model table's, for "+s.Model+")"
				}
			}
		case "api_key":
			if h := s.getenv(providers.KeyHelperEnv); h != "" && st.Value == "(not set)" && s.Config.Provider == "anthropic" {
				st.Value, st.Source = "(not set: apiKeyHelper's is used)", s.whence("environment "+providers.KeyHelperEnv)
			}
		case "notify":
			st.Value = strconv.FormatBool(s.Notify())
		case "api_key_store":
			if st.Value == "" {
				st.Value = "none"
			}
		case "safe_commands":
			if st.Value == "" {
				st.Value = "(none added)"
			}
		case "fallback_model":
			if st.Value == "" {
				st.Value = "(none)"
			}
		case "additional_directories":
			switch {
			case len(s.Roots) > 0:
				st.Value = strings.Join(s.Roots, ", ") // --add-dir's too, resolved
				if len(s.in.AddDirs) > 0 {
					st.Source = "flag --add-dir, " + st.Source
				}
			case st.Value == "":
				st.Value = "(none)"
			}
		case "base_url":
			if st.Value == "" {
				st.Value = "(the provider's)"
			}
		case "openai_api":
			if st.Value == "" {
				st.Value = "(responses for OpenAI's reasoning models, o-series and gpt-5…; chat for the rest)"
			}
		}
		st.Source = s.whence(st.Source)
		out = append(out, st)
	}
	for _, d := range providers.Details(s.Config.Provider, s.getenv) {
		out = append(out, config.Setting{Key: s.Config.Provider + "." + d.Key, Value: d.Value, Source: s.whence(d.Source)})
	}
	out = append(out,
		config.Setting{Key: "compact_at", Value: strconv.FormatFloat(agent.DefaultCompactAt, 'g', -1, 64), Source: "default"},
		s.sessionDirEntry(),
		config.Setting{Key: "allow_outside", Value: strconv.FormatBool(s.in.AllowOutside), Source: flagOr(s.in.AllowOutside, "--allow-outside")},
	)
	if k := KeepEnv(s.in.Getenv); len(k) > 0 {
		out = append(out, config.Setting{Key: "keep_env", Value: strings.Join(k, ", "), Source: "environment DSH_KEEP_ENV"})
	}
	// The MCP servers that are not the config's own: Claude Code's and the
	// enabled plugins'.
	own := map[string]bool{}
	for _, m := range s.Config.MCP {
		own[m.Name] = true
	}
	for _, m := range s.claudeMCP {
		if !own[m.Name] {
			own[m.Name] = true
			out = append(out, config.Setting{Key: "mcp." + m.Name, Value: config.MCPServer(m).Describe(), Source: s.claudeMCPFrom[m.Name]})
		}
	}
	for _, m := range s.plugins.mcp {
		if !own[m.Name] {
			out = append(out, config.Setting{Key: "mcp." + m.Name, Value: config.MCPServer(m).Describe(), Source: "an enabled plugin"})
		}
	}
	return out
}

func (s Settings) sessionDirEntry() config.Setting {
	e := config.Setting{Key: "session_dir", Value: s.SessionDir, Source: "default"}
	switch {
	case s.in.SessionDir != "":
		e.Source = "flag --session-dir"
	case s.in.Getenv("XDG_STATE_HOME") != "":
		e.Source = "environment XDG_STATE_HOME"
	}
	return e
}

func flagOr(set bool, name string) string {
	if set {
		return "flag " + name
	}
	return "default"
}

// IsFlagError reports whether err is a mistake in the command line.
func IsFlagError(err error) bool {
	var fe *FlagError
	return errors.As(err, &fe)
}
