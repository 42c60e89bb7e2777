// Package providers chooses and builds the model provider from command-line
// flags and the environment: the table of providers, what chooses each and
// where it connects. The vendors' providers are built and run by the model
// runner (package remote), so that dsh never loads their SDKs; the script
// provider runs in dsh.
package providers

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/models"
	"github.com/dsh-dev/dsh/internal/provider/remote"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/proxyenv"
)

// Flags are the command-line choices that shape the provider.
type Flags struct {
	Provider string // "" (choose from the environment), or a provider's name
	Model    string // "" for the provider's default
	Script   string // the script file, for "script"; setting it alone implies "script"
	// OpenAIAPI is the API OpenAI's models are asked through (openai.Config.API).
	OpenAIAPI string
}

// A backend is one provider: how the environment selects it, how it is built
// and how its models are listed. Adding a provider is adding one to backends.
type backend struct {
	name string
	// chosenBy are the variables that choose it when no provider is named,
	// looked at in the table's order; none: it must be named.
	chosenBy []string
	// keyEnv and baseURLEnv are where its key and endpoint are read, for
	// dsh config; "" when it has none.
	keyEnv, baseURLEnv string
	// env are the variables its provider reads, which the runner is sent.
	env []string
	// build builds a provider dsh runs itself (the script); nil: the model
	// runner builds it (package remote).
	build func(getenv func(string) string, flags Flags) (provider.Provider, error)
	// defaultModel is the model when none is configured, and what chose it.
	defaultModel func(ctx context.Context, getenv func(string) string) (model, why string, err error)
	// list is nil for a provider with no model list.
	list func(ctx context.Context, getenv func(string) string) ([]models.Info, error)
	// details are what dsh config shows of where it connects, beyond the
	// key and base URL; nil: nothing more.
	details func(getenv func(string) string) []Detail
}

// Detail is one value of a provider's connection and where it came from,
// for dsh config.
type Detail struct{ Key, Value, Source string }

var backends = []backend{
	{
		name: "anthropic", chosenBy: []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", KeyHelperEnv},
		keyEnv: "ANTHROPIC_API_KEY", baseURLEnv: "ANTHROPIC_BASE_URL",
		env:          anthropicEnv,
		defaultModel: claudeModel(models.DefaultAnthropic, "default (Anthropic's)", same),
		list:         listed("anthropic", anthropicEnv),
		details: func(getenv func(string) string) []Detail {
			var out []Detail
			if h := getenv(KeyHelperEnv); h != "" && getenv("ANTHROPIC_API_KEY") == "" && getenv("ANTHROPIC_AUTH_TOKEN") == "" {
				out = append(out, Detail{"credentials", "what apiKeyHelper prints: " + h, "Claude Code's settings.json"})
			}
			if getenv("ANTHROPIC_AUTH_TOKEN") != "" {
				out = append(out, Detail{"credentials", "a bearer token (Authorization), not the key", "environment ANTHROPIC_AUTH_TOKEN"})
			}
			if v := getenv("ANTHROPIC_CUSTOM_HEADERS"); v != "" {
				// Their names only: a gateway's header holds its token.
				h, err := provider.HeaderLines(v)
				names := slices.Sorted(maps.Keys(h))
				value := strings.Join(names, ", ")
				if err != nil {
					value = "(unreadable: " + err.Error() + ")"
				}
				out = append(out, Detail{"headers", value, "environment ANTHROPIC_CUSTOM_HEADERS"})
			}
			return out
		},
	},
	{
		name: "openai", chosenBy: []string{"OPENAI_API_KEY", "OPENAI_BASE_URL"},
		keyEnv: "OPENAI_API_KEY", baseURLEnv: "OPENAI_BASE_URL",
		env:          openAIEnv,
		defaultModel: openAIDefault,
		list:         listed("openai", openAIEnv),
	},
	{
		name: "bedrock", baseURLEnv: "ANTHROPIC_BEDROCK_BASE_URL",
		env: []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
			"AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "ANTHROPIC_BEDROCK_BASE_URL", CredentialExportEnv,
			// The SDK's own (see vendors.awsEnvironment).
			"AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE",
			"AWS_ROLE_ARN", "AWS_ROLE_SESSION_NAME", "AWS_WEB_IDENTITY_TOKEN_FILE",
			"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
			"AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
			"AWS_EC2_METADATA_DISABLED", "AWS_EC2_METADATA_SERVICE_ENDPOINT", "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE",
			"AWS_CA_BUNDLE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_STS", "AWS_USE_FIPS_ENDPOINT", "AWS_USE_DUALSTACK_ENDPOINT",
			"AWS_RETRY_MODE", "AWS_MAX_ATTEMPTS"},
		defaultModel: claudeModel(models.DefaultAnthropic, "default (Anthropic's, as a Bedrock global inference profile)", models.BedrockModel),
		list: func(context.Context, func(string) string) ([]models.Info, error) {
			return models.Platform("bedrock"), nil
		},
		details: func(getenv func(string) string) []Detail {
			cred := Detail{"credentials", "the AWS default chain (shared config, SSO, instance role)", "default"}
			switch {
			case getenv(CredentialExportEnv) != "" && getenv("AWS_BEARER_TOKEN_BEDROCK") == "":
				cred = Detail{"credentials", "what awsCredentialExport prints: " + getenv(CredentialExportEnv), "Claude Code's settings.json"}
			case getenv("AWS_BEARER_TOKEN_BEDROCK") != "":
				cred = Detail{"credentials", "a Bedrock API key (bearer token)", "environment AWS_BEARER_TOKEN_BEDROCK"}
			case getenv("AWS_ACCESS_KEY_ID") != "":
				cred = Detail{"credentials", "an access key", "environment AWS_ACCESS_KEY_ID"}
			case getenv("AWS_PROFILE") != "":
				cred = Detail{"credentials", "profile " + getenv("AWS_PROFILE"), "environment AWS_PROFILE"}
			case getenv("AWS_WEB_IDENTITY_TOKEN_FILE") != "":
				cred = Detail{"credentials", "web identity: the role " + getenv("AWS_ROLE_ARN"), "environment AWS_WEB_IDENTITY_TOKEN_FILE"}
			case getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI") != "" || getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") != "":
				cred = Detail{"credentials", "the container's role", "environment AWS_CONTAINER_CREDENTIALS_*"}
			}
			if f := getenv("AWS_CONFIG_FILE"); f != "" && (cred.Source == "default" || getenv("AWS_PROFILE") != "") {
				cred.Value += " from " + f
			}
			return []Detail{firstEnv(getenv, "AWS_REGION", "AWS_DEFAULT_REGION").detail("region", "(the AWS profile's)"), cred}
		},
	},
	{
		name: "vertex", baseURLEnv: "ANTHROPIC_VERTEX_BASE_URL",
		env: []string{"CLOUD_ML_REGION", "GOOGLE_CLOUD_LOCATION", "ANTHROPIC_VERTEX_PROJECT_ID", "GOOGLE_CLOUD_PROJECT",
			"GOOGLE_APPLICATION_CREDENTIALS", "ANTHROPIC_VERTEX_BASE_URL"},
		defaultModel: claudeModel(models.DefaultAnthropic, "default (Anthropic's)", same),
		list: func(context.Context, func(string) string) ([]models.Info, error) {
			return models.Platform("vertex"), nil
		},
		details: func(getenv func(string) string) []Detail {
			cred := Detail{"credentials", "Google application default credentials", "default"}
			if getenv("GOOGLE_APPLICATION_CREDENTIALS") != "" {
				cred = Detail{"credentials", getenv("GOOGLE_APPLICATION_CREDENTIALS"), "environment GOOGLE_APPLICATION_CREDENTIALS"}
			}
			return []Detail{
				firstEnv(getenv, "CLOUD_ML_REGION", "GOOGLE_CLOUD_LOCATION").detail("region", "global"),
				firstEnv(getenv, "ANTHROPIC_VERTEX_PROJECT_ID", "GOOGLE_CLOUD_PROJECT").detail("project", "(the credentials')"),
				cred,
			}
		},
	},
	{
		name: "azure", keyEnv: "AZURE_OPENAI_API_KEY", baseURLEnv: "AZURE_OPENAI_ENDPOINT",
		env: []string{"AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "OPENAI_API_VERSION",
			// Entra ID's (see vendors.entraCredential).
			"AZURE_TENANT_ID", "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PATH",
			"AZURE_CLIENT_CERTIFICATE_PASSWORD", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_AUTHORITY_HOST",
			// A managed identity's, hidden too: the default chain reads them.
			"IDENTITY_HEADER", "MSI_SECRET"},
		defaultModel: fixed(models.DefaultOpenAI, "default (OpenAI's; on Azure, name your deployment with --model)"),
		list: func(context.Context, func(string) string) ([]models.Info, error) {
			// Deployments are listed by Azure's management API, not the
			// resource's: offer OpenAI's models, which deployments are
			// usually named after.
			out := models.Builtin("openai")
			for i := range out {
				out[i].Provider = "azure"
			}
			return out, nil
		},
		details: func(getenv func(string) string) []Detail {
			auth := Detail{"credentials", "Entra ID (az login or a managed identity)", "default"}
			switch {
			case getenv("AZURE_OPENAI_API_KEY") != "":
				auth = Detail{"credentials", "an API key", "environment AZURE_OPENAI_API_KEY"}
			case getenv("AZURE_CLIENT_SECRET") != "":
				auth = Detail{"credentials", "Entra ID: a service principal's secret", "environment AZURE_CLIENT_SECRET"}
			case getenv("AZURE_CLIENT_CERTIFICATE_PATH") != "":
				auth = Detail{"credentials", "Entra ID: a service principal's certificate", "environment AZURE_CLIENT_CERTIFICATE_PATH"}
			case getenv("AZURE_FEDERATED_TOKEN_FILE") != "":
				auth = Detail{"credentials", "Entra ID: workload identity", "environment AZURE_FEDERATED_TOKEN_FILE"}
			case getenv("AZURE_CLIENT_ID") != "":
				auth = Detail{"credentials", "Entra ID: the managed identity " + getenv("AZURE_CLIENT_ID") + " (else az login)", "environment AZURE_CLIENT_ID"}
			}
			return []Detail{firstEnv(getenv, "OPENAI_API_VERSION").detail("api_version", models.DefaultAzureAPIVersion), auth}
		},
	},
	{
		name: "script",
		build: func(_ func(string) string, flags Flags) (provider.Provider, error) {
			if flags.Script == "" {
				return nil, errors.New("--provider script needs --script FILE")
			}
			return loadScript(flags.Script)
		},
		defaultModel: fixed("script", "default (the script provider)"),
	},
}

// KeyHelperEnv carries Claude Code's apiKeyHelper, from the user's
// settings.json, to the runner, which runs it for the keys it needs. (Set in
// dsh's environment, it works too.)
const KeyHelperEnv = "DSH_ANTHROPIC_KEY_HELPER"

// CredentialExportEnv carries Claude Code's awsCredentialExport to the
// runner, as KeyHelperEnv does its apiKeyHelper.
const CredentialExportEnv = "DSH_AWS_CREDENTIAL_EXPORT"

// The variables Anthropic's and OpenAI's providers read.
var (
	anthropicEnv = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_CUSTOM_HEADERS",
		KeyHelperEnv, "CLAUDE_CODE_API_KEY_HELPER_TTL_MS"}
	openAIEnv = []string{"OPENAI_API_KEY", "OPENAI_BASE_URL"}
)

// spec is b's provider as the runner builds it.
func (b backend) spec(getenv func(string) string, flags Flags) remote.Spec {
	return specOf(b.name, b.env, getenv, flags)
}

// specOf is provider name as the runner builds it: the variables it reads
// (env), as getenv has them.
func specOf(name string, env []string, getenv func(string) string, flags Flags) remote.Spec {
	spec := remote.Spec{Backend: name, Model: flags.Model, OpenAIAPI: flags.OpenAIAPI}
	for _, k := range slices.Concat(env, proxyenv.Names) { // the runner reaches the vendor as dsh would
		if v := getenv(k); v != "" {
			if spec.Env == nil {
				spec.Env = map[string]string{}
			}
			spec.Env[k] = v
		}
	}
	return spec
}

// listed asks the runner for the models a vendor's server lists.
func listed(name string, env []string) func(context.Context, func(string) string) ([]models.Info, error) {
	return func(ctx context.Context, getenv func(string) string) ([]models.Info, error) {
		return remote.List(ctx, specOf(name, env, getenv, Flags{}))
	}
}

// envValue is a value read from the first of some variables that is set.
type envValue struct{ name, value string }

func firstEnv(getenv func(string) string, names ...string) envValue {
	for _, n := range names {
		if v := getenv(n); v != "" {
			return envValue{n, v}
		}
	}
	return envValue{}
}

func (e envValue) detail(key, unset string) Detail {
	if e.value == "" {
		return Detail{key, unset, "default"}
	}
	return Detail{key, e.value, "environment " + e.name}
}

// Details are what dsh config shows of where provider name connects.
func Details(name string, getenv func(string) string) []Detail {
	b, ok := lookup(name)
	if !ok || b.details == nil {
		return nil
	}
	return b.details(getenv)
}

func fixed(model, why string) func(context.Context, func(string) string) (string, string, error) {
	return func(context.Context, func(string) string) (string, string, error) { return model, why, nil }
}

// served remembers, per server and key, the model a server first listed: dsh
// acp resolves settings for every session, and the server is asked once.
var served sync.Map // servedKey → string

type servedKey struct{ baseURL, apiKey string }

// openAIDefault is OpenAI's default model, or for an OpenAI-compatible server
// the first it serves (it does not have OpenAI's); asking it may fail, and
// then OpenAI's default is returned with the error.
func openAIDefault(ctx context.Context, getenv func(string) string) (string, string, error) {
	if getenv("OPENAI_BASE_URL") == "" {
		return models.DefaultOpenAI, "default (OpenAI's)", nil
	}
	key := servedKey{getenv("OPENAI_BASE_URL"), getenv("OPENAI_API_KEY")}
	if m, ok := served.Load(key); ok {
		return m.(string), "default (the first model the server lists)", nil
	}
	m, err := remote.Served(ctx, specOf("openai", openAIEnv, getenv, Flags{}))
	if err != nil {
		return models.DefaultOpenAI, "default (OpenAI's)", err
	}
	served.Store(key, m)
	return m, "default (the first model the server lists)", nil
}

func lookup(name string) (backend, bool) {
	for _, b := range backends {
		if b.name == name {
			return b, true
		}
	}
	return backend{}, false
}

// Names are the providers' names, in the table's order.
func Names() []string {
	var out []string
	for _, b := range backends {
		out = append(out, b.name)
	}
	return out
}

// Chosen names the provider the environment chooses when none is named, and
// the variable that chose it; "", "" when none does.
func Chosen(getenv func(string) string) (name, env string) {
	// Claude Code's switches to a cloud come first: whoever set one may
	// have an Anthropic key too, for something else.
	for _, c := range [...]struct{ env, name string }{{"CLAUDE_CODE_USE_BEDROCK", "bedrock"}, {"CLAUDE_CODE_USE_VERTEX", "vertex"}} {
		if on(getenv(c.env)) {
			return c.name, c.env
		}
	}
	for _, b := range backends {
		for _, v := range b.chosenBy {
			if getenv(v) != "" {
				return b.name, v
			}
		}
	}
	return "", ""
}

func same(id string) string { return id }

// on reads a switch as Claude Code does: set, and not 0 or false.
func on(v string) bool {
	v = strings.ToLower(strings.TrimSpace(v))
	return v != "" && v != "0" && v != "false" && v != "no" && v != "off"
}

// claudeModel is the model of the Claude providers: ANTHROPIC_MODEL, as
// Claude Code reads it, else def (to is the provider's form of a model id).
func claudeModel(def, why string, to func(string) string) func(context.Context, func(string) string) (string, string, error) {
	return func(_ context.Context, getenv func(string) string) (string, string, error) {
		if m := strings.TrimSpace(getenv("ANTHROPIC_MODEL")); m != "" {
			return to(models.ClaudeAlias(m)), "environment ANTHROPIC_MODEL", nil
		}
		return to(def), why, nil
	}
}

// KeyEnv and BaseURLEnv name the variables a provider reads its key and its
// endpoint from; "" when it has none.
func KeyEnv(name string) string {
	b, _ := lookup(name)
	return b.keyEnv
}

// BaseURLEnv: see KeyEnv.
func BaseURLEnv(name string) string {
	b, _ := lookup(name)
	return b.baseURLEnv
}

// ErrNoProvider says that nothing selects a provider, and what would.
var ErrNoProvider = errors.New(`no model provider is configured. Set one of:
  ANTHROPIC_API_KEY  to use Anthropic (Claude), or ANTHROPIC_AUTH_TOKEN for a gateway
  OPENAI_API_KEY     to use OpenAI
  OPENAI_BASE_URL    to use an OpenAI-compatible server, e.g. http://localhost:11434/v1 for ollama
or pass --provider bedrock (AWS credentials), --provider vertex (Google
application default credentials), --provider azure (AZURE_OPENAI_ENDPOINT)
(Claude Code's CLAUDE_CODE_USE_BEDROCK=1 and CLAUDE_CODE_USE_VERTEX=1 work too,
and so does its apiKeyHelper in ~/.claude/settings.json)
or --provider script --script FILE; provider = in the config names one too.
To see dsh at work without any of these, run: dsh demo`)

// Keyed reports whether getenv sets what FromEnv needs to choose a provider
// by itself.
func Keyed(getenv func(string) string) bool {
	name, _ := Chosen(getenv)
	return name != ""
}

// FromEnv builds the provider the flags ask for, reading its settings through
// getenv (os.Getenv in production). With no provider named it picks the
// first the environment chooses (Chosen), else it returns ErrNoProvider.
func FromEnv(getenv func(string) string, flags Flags) (provider.Provider, error) {
	name := flags.Provider
	if name == "" && flags.Script != "" {
		name = "script"
	}
	if name == "" {
		if name, _ = Chosen(getenv); name == "" {
			return nil, ErrNoProvider
		}
	}
	b, ok := lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown provider %q: use %s", name, strings.Join(Names(), ", "))
	}
	if b.build == nil {
		p, err := remote.New(context.Background(), b.spec(getenv, flags))
		if err != nil {
			return nil, err
		}
		return p, nil
	}
	p, err := b.build(getenv, flags)
	if err != nil {
		return nil, err // not a typed nil in a non-nil interface
	}
	return p, nil
}

// DefaultModel is the model provider name uses when none is configured, and
// what chose it. When an OpenAI-compatible server cannot say which it serves,
// the vendor's default comes back with the error.
func DefaultModel(ctx context.Context, name string, getenv func(string) string) (model, why string, err error) {
	b, ok := lookup(name)
	if !ok {
		return "", "default", nil
	}
	return b.defaultModel(ctx, getenv)
}

// Models returns the models provider name serves, with the table's figures
// merged in. When the call fails it returns the built-in list of that
// provider together with the error, so the caller can both carry on and say
// why the list is not live.
func Models(ctx context.Context, name string, getenv func(string) string) ([]models.Info, error) {
	b, ok := lookup(name)
	if !ok || b.list == nil {
		return models.Builtin(""), nil
	}
	live, err := b.list(ctx, getenv)
	if err == nil && len(live) == 0 {
		err = errors.New("the server lists no models")
	}
	if err != nil {
		return models.Builtin(name), fmt.Errorf("listing the %s models (showing the built-in list): %w", name, err)
	}
	return live, nil
}

// scripts are the script files read so far, by path: each session builds its
// provider, and a process's sessions that play one unchanged file share its
// parsed turns instead of each parsing (and keeping) them again.
var scripts struct {
	sync.Mutex
	m map[string]scriptFile
}

type scriptFile struct {
	fi os.FileInfo
	s  *script.Script
}

// loadScript is the script in path, its turns none played yet.
func loadScript(path string) (*script.Script, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	scripts.Lock()
	defer scripts.Unlock()
	if c, ok := scripts.m[path]; ok && os.SameFile(c.fi, fi) && c.fi.Size() == fi.Size() && c.fi.ModTime().Equal(fi.ModTime()) {
		return c.s.Fresh(), nil
	}
	s, err := script.Load(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if scripts.m == nil {
		scripts.m = map[string]scriptFile{}
	}
	scripts.m[path] = scriptFile{fi, s}
	return s.Fresh(), nil
}
