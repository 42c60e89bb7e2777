package settings

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/config"
	"github.com/dsh-dev/dsh/internal/provider/anthropic"
	"github.com/dsh-dev/dsh/internal/provider/models"
)

// TestResolve: what a session would use, each value with its source, and the
// host options built from the same resolution.
func TestResolve(t *testing.T) {
	type want struct{ value, source string }
	for _, tc := range []struct {
		name          string
		user, project string
		env           map[string]string
		flags         config.Flags
		want          map[string]want
		mode          agent.Mode
		window        int64
		lspTrusted    bool // language servers start unasked
	}{
		{
			name: "nothing configured",
			want: map[string]want{
				"model": {"(none: no provider)", "default"}, "mode": {"default", "default"}, "sandbox": {"off", "default"},
				"thinking": {"(the provider's: off)", "default"}, "compact_at": {"0.8", "default"},
				"context_window": {"(the model's, once a provider is set)", "default"},
			},
			mode: agent.ModeDefault,
		},
		{
			name: "the provider's default model is named",
			env:  map[string]string{"ANTHROPIC_API_KEY": "k"},
			want: map[string]want{
				"model":          {anthropic.DefaultModel, "default (Anthropic's)"},
				"provider":       {"anthropic", "environment ANTHROPIC_API_KEY"},
				"context_window": {strconv.FormatInt(models.Lookup(anthropic.DefaultModel).ContextWindow, 10), "default (the model table's, for " + anthropic.DefaultModel + ")"},
			},
			mode: agent.ModeDefault,
		},
		{
			name:  "files, then flags",
			user:  "mode = \"read-only\"\nmodel = \"user-model\"\nthinking = \"high\"\n[context_window]\n\"flag-model\" = 50000\n",
			env:   map[string]string{"ANTHROPIC_API_KEY": "k"},
			flags: config.Flags{Model: "flag-model"},
			want: map[string]want{
				"model": {"flag-model", "flag --model"}, "mode": {"read-only", "USER"}, "thinking": {"high", "USER"},
				"context_window.flag-model": {"50000", "USER"},
			},
			mode: agent.ModeReadOnly, window: 50000,
		},
		{
			name:    "an untrusted project",
			project: "mode = \"bypass\"\nthinking = \"max\"\nmodel = \"p\"\n",
			env:     map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "https://u:secret@llm.example"},
			want: map[string]want{
				"model": {"p", "PROJECT"}, "mode": {"default", "default"}, "thinking": {"(the provider's: off)", "default"},
				"base_url": {"https://u:xxxxx@llm.example", "environment ANTHROPIC_BASE_URL"},
			},
			mode: agent.ModeDefault,
		},
		{
			name: "OpenAI's API is chosen per model unless the user names one",
			env:  map[string]string{"OPENAI_API_KEY": "k"},
			want: map[string]want{
				"provider":   {"openai", "environment OPENAI_API_KEY"},
				"openai_api": {"(responses for OpenAI's reasoning models, o-series and gpt-5…; chat for the rest)", "default"},
			},
			mode: agent.ModeDefault,
		},
		{
			name: "the user names OpenAI's API",
			user: "openai_api = \"chat\"\n",
			env:  map[string]string{"OPENAI_API_KEY": "k"},
			want: map[string]want{"openai_api": {"chat", "USER"}},
			mode: agent.ModeDefault,
		},
		{
			name:  "Claude on Bedrock: the region and credentials in force, and where from",
			env:   map[string]string{"AWS_REGION": "eu-west-1", "AWS_PROFILE": "work"},
			flags: config.Flags{Provider: "bedrock"},
			want: map[string]want{
				"provider":            {"bedrock", "flag --provider"},
				"model":               {"global.anthropic." + anthropic.DefaultModel + "-v1:0", "default (Anthropic's, as a Bedrock global inference profile)"},
				"bedrock.region":      {"eu-west-1", "environment AWS_REGION"},
				"bedrock.credentials": {"profile work", "environment AWS_PROFILE"},
				"context_window":      {strconv.FormatInt(models.Lookup(anthropic.DefaultModel).ContextWindow, 10), "default (the model table's, for global.anthropic." + anthropic.DefaultModel + "-v1:0)"},
			},
			mode: agent.ModeDefault,
		},
		{
			name: "Claude Code's thinking budget",
			env:  map[string]string{"ANTHROPIC_API_KEY": "k", "MAX_THINKING_TOKENS": "16000"},
			want: map[string]want{"thinking": {"16000", "environment MAX_THINKING_TOKENS"}},
			mode: agent.ModeDefault,
		},
		{
			name: "Claude Code's thinking budget, under the config's",
			user: "thinking = \"high\"\n",
			env:  map[string]string{"ANTHROPIC_API_KEY": "k", "MAX_THINKING_TOKENS": "16000"},
			want: map[string]want{"thinking": {"high", "USER"}},
			mode: agent.ModeDefault,
		},
		{
			name: "Claude Code's thinking budget is not OpenAI's",
			env:  map[string]string{"OPENAI_API_KEY": "k", "MAX_THINKING_TOKENS": "16000"},
			want: map[string]want{"thinking": {"(the provider's: off)", "default"}},
			mode: agent.ModeDefault,
		},
		{
			name: "Claude through a gateway, as Claude Code is set up for one",
			env: map[string]string{"ANTHROPIC_AUTH_TOKEN": "gw", "ANTHROPIC_BASE_URL": "https://gw.example/anthropic",
				"ANTHROPIC_CUSTOM_HEADERS": "X-Team: dsh\ncf-aig-authorization: Bearer secret"},
			want: map[string]want{
				"provider":              {"anthropic", "environment ANTHROPIC_AUTH_TOKEN"},
				"anthropic.credentials": {"a bearer token (Authorization), not the key", "environment ANTHROPIC_AUTH_TOKEN"},
				"anthropic.headers":     {"Cf-Aig-Authorization, X-Team", "environment ANTHROPIC_CUSTOM_HEADERS"},
			},
			mode: agent.ModeDefault,
		},
		{
			name: "Claude on Bedrock as Claude Code is set up for it",
			env: map[string]string{"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "us-east-1", "ANTHROPIC_API_KEY": "for something else",
				"ANTHROPIC_MODEL": "us.anthropic.claude-opus-4-1-20250805-v1:0"},
			want: map[string]want{
				"provider":       {"bedrock", "environment CLAUDE_CODE_USE_BEDROCK"},
				"model":          {"us.anthropic.claude-opus-4-1-20250805-v1:0", "environment ANTHROPIC_MODEL"},
				"bedrock.region": {"us-east-1", "environment AWS_REGION"},
			},
			mode: agent.ModeDefault,
		},
		{
			name:  "Claude on Bedrock with an EKS service account's role",
			env:   map[string]string{"AWS_REGION": "eu-west-1", "AWS_ROLE_ARN": "arn:aws:iam::1:role/dsh", "AWS_WEB_IDENTITY_TOKEN_FILE": "/var/run/token"},
			flags: config.Flags{Provider: "bedrock"},
			want: map[string]want{
				"bedrock.credentials": {"web identity: the role arn:aws:iam::1:role/dsh", "environment AWS_WEB_IDENTITY_TOKEN_FILE"},
			},
			mode: agent.ModeDefault,
		},
		{
			name:  "Claude on Bedrock with a profile in another config file",
			env:   map[string]string{"AWS_PROFILE": "work", "AWS_CONFIG_FILE": "/etc/aws/config"},
			flags: config.Flags{Provider: "bedrock"},
			want: map[string]want{
				"bedrock.credentials": {"profile work from /etc/aws/config", "environment AWS_PROFILE"},
			},
			mode: agent.ModeDefault,
		},
		{
			name:  "Azure OpenAI with Entra ID",
			env:   map[string]string{"AZURE_OPENAI_ENDPOINT": "https://r.openai.azure.com"},
			flags: config.Flags{Provider: "azure", Model: "my-gpt"},
			want: map[string]want{
				"base_url":          {"https://r.openai.azure.com", "environment AZURE_OPENAI_ENDPOINT"},
				"azure.credentials": {"Entra ID (az login or a managed identity)", "default"},
				"azure.api_version": {"2025-04-01-preview", "default"},
				"api_key":           {"(not set)", "environment AZURE_OPENAI_API_KEY"},
			},
			mode: agent.ModeDefault,
		},
		{
			name: "Azure OpenAI with a service principal",
			env: map[string]string{"AZURE_OPENAI_ENDPOINT": "https://r.openai.azure.com", "AZURE_TENANT_ID": "t",
				"AZURE_CLIENT_ID": "c", "AZURE_CLIENT_SECRET": "s"},
			flags: config.Flags{Provider: "azure", Model: "my-gpt"},
			want: map[string]want{
				"azure.credentials": {"Entra ID: a service principal's secret", "environment AZURE_CLIENT_SECRET"},
			},
			mode: agent.ModeDefault,
		},
		{
			name:  "Azure OpenAI with a user-assigned managed identity",
			env:   map[string]string{"AZURE_OPENAI_ENDPOINT": "https://r.openai.azure.com", "AZURE_CLIENT_ID": "c"},
			flags: config.Flags{Provider: "azure", Model: "my-gpt"},
			want: map[string]want{
				"azure.credentials": {"Entra ID: the managed identity c (else az login)", "environment AZURE_CLIENT_ID"},
			},
			mode: agent.ModeDefault,
		},
		{
			name:    "a trusted project",
			user:    "trusted_projects = [\"$PROJ\"]\n",
			project: "mode = \"bypass\"\n",
			want:    map[string]want{"mode": {"bypass", "PROJECT"}},
			mode:    agent.ModeBypass, lspTrusted: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			env := map[string]string{"XDG_CONFIG_HOME": filepath.Join(dir, "xdg"), "HOME": dir}
			for k, v := range tc.env {
				env[k] = v
			}
			userPath := filepath.Join(dir, "xdg", "dsh", "config.toml")
			projectPath := filepath.Join(dir, "proj", ".dsh", "config.toml")
			for path, text := range map[string]string{userPath: tc.user, projectPath: tc.project} {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if text != "" {
					text = strings.ReplaceAll(text, "$PROJ", filepath.Join(dir, "proj"))
					if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			st, err := Resolve(context.Background(), Input{Cwd: filepath.Join(dir, "proj"), Getenv: func(k string) string { return env[k] },
				Flags: tc.flags, SessionDir: filepath.Join(dir, "sessions")})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]config.Setting{}
			for _, e := range st.Entries() {
				got[e.Key] = e
			}
			for key, w := range tc.want {
				w.source = strings.NewReplacer("USER", userPath, "PROJECT", projectPath).Replace(w.source)
				if g := got[key]; g.Value != w.value || g.Source != w.source {
					t.Errorf("%s = %q from %q, want %q from %q", key, g.Value, g.Source, w.value, w.source)
				}
			}
			o := st.Options()
			if o.Mode != tc.mode || o.ContextWindow != tc.window || o.Model != st.Model || o.Models == nil || o.Provider == nil {
				t.Errorf("host options: mode %s window %d model %q", o.Mode, o.ContextWindow, o.Model)
			}
			if o.LSP.Trust.Trusted() != tc.lspTrusted {
				t.Errorf("language servers trusted: %v", o.LSP.Trust.Trusted())
			}
		})
	}
}

func TestFlagErrors(t *testing.T) {
	for _, f := range []config.Flags{{Mode: "yolo"}, {Thinking: "lots"}, {Sandbox: "sometimes"}, {Provider: "openai", Thinking: "4096"}} {
		_, err := Resolve(context.Background(), Input{Cwd: t.TempDir(), Getenv: func(string) string { return "" }, Flags: f, SessionDir: t.TempDir()})
		if !IsFlagError(err) {
			t.Errorf("%+v: err = %v, want a flag error", f, err)
		}
	}
}

// A project's skill and agent directories are trusted only when the project
// is (trusted_projects here); the user's own always are.
func TestProjectDirsFollowTrust(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		t.Run(strconv.FormatBool(trusted), func(t *testing.T) {
			dir := t.TempDir()
			proj := filepath.Join(dir, "proj")
			env := map[string]string{"XDG_CONFIG_HOME": filepath.Join(dir, "xdg"), "HOME": dir}
			if err := os.MkdirAll(filepath.Join(dir, "xdg", "dsh"), 0o755); err != nil {
				t.Fatal(err)
			}
			if trusted {
				if err := os.WriteFile(filepath.Join(dir, "xdg", "dsh", "config.toml"), []byte("trusted_projects = [\""+proj+"\"]\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			st, err := Resolve(context.Background(), Input{Cwd: proj, Getenv: func(k string) string { return env[k] }, SessionDir: filepath.Join(dir, "s")})
			if err != nil {
				t.Fatal(err)
			}
			o := st.Options()
			for _, d := range o.SkillDirs {
				if d.Trusted != (d.Root != "" && trusted) {
					t.Errorf("skills %s: trusted %v", d.Path, d.Trusted)
				}
			}
			for _, d := range o.AgentDirs {
				if d.Trusted != (d.Root != "" && trusted) {
					t.Errorf("agents %s: trusted %v", d.Path, d.Trusted)
				}
			}
		})
	}
}
