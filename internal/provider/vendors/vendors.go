// Package vendors builds the providers that speak a vendor's API through its
// official SDK (Anthropic, OpenAI, and the clouds that serve their models).
// Only the model runner (cmd/dsh-model) links it: dsh asks the runner
// through package remote, and never loads an SDK itself.
package vendors

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/anthropic"
	"github.com/dsh-dev/dsh/internal/provider/models"
	"github.com/dsh-dev/dsh/internal/provider/openai"
	"github.com/dsh-dev/dsh/internal/provider/remote"
)

// Backend is what the runner serves.
type Backend struct{}

var _ remote.Backend = Backend{}

// Build builds spec's provider, reading its settings from spec.Env.
func (Backend) Build(spec remote.Spec) (provider.Provider, error) {
	getenv := spec.Getenv
	switch spec.Backend {
	case "anthropic":
		cfg, err := anthropicConfig(getenv, spec.Model)
		if err != nil {
			return nil, err
		}
		return anthropic.New(cfg)
	case "openai":
		cfg := openAIConfig(getenv, spec.Model)
		cfg.API = spec.OpenAIAPI
		return openai.New(cfg)
	case "bedrock":
		if err := awsEnvironment(getenv); err != nil {
			return nil, err
		}
		pl, err := anthropic.Bedrock(context.Background(), anthropic.BedrockConfig{
			Region: first(getenv, "AWS_REGION", "AWS_DEFAULT_REGION"), Profile: getenv("AWS_PROFILE"),
			AccessKey: getenv("AWS_ACCESS_KEY_ID"), SecretKey: getenv("AWS_SECRET_ACCESS_KEY"), SessionToken: getenv("AWS_SESSION_TOKEN"),
			BearerToken: getenv("AWS_BEARER_TOKEN_BEDROCK"),
			// Claude Code's awsCredentialExport, which dsh's side reads from its settings.
			CredentialExport: getenv("DSH_AWS_CREDENTIAL_EXPORT"),
		})
		if err != nil {
			return nil, err
		}
		return anthropic.New(anthropic.Config{Platform: pl, BaseURL: getenv("ANTHROPIC_BEDROCK_BASE_URL"), Model: spec.Model})
	case "vertex":
		cfg := anthropic.VertexConfig{
			Region:  first(getenv, "CLOUD_ML_REGION", "GOOGLE_CLOUD_LOCATION"),
			Project: first(getenv, "ANTHROPIC_VERTEX_PROJECT_ID", "GOOGLE_CLOUD_PROJECT"),
		}
		if path := getenv("GOOGLE_APPLICATION_CREDENTIALS"); path != "" {
			b, err := os.ReadFile(path)
			if err != nil {
				return nil, fmt.Errorf("vertex: the credentials file GOOGLE_APPLICATION_CREDENTIALS names: %w", err)
			}
			cfg.CredentialsJSON = b
		}
		pl, err := anthropic.Vertex(context.Background(), cfg)
		if err != nil {
			return nil, err
		}
		return anthropic.New(anthropic.Config{Platform: pl, BaseURL: getenv("ANTHROPIC_VERTEX_BASE_URL"), Model: spec.Model})
	case "azure":
		cfg := openai.Config{APIKey: getenv("AZURE_OPENAI_API_KEY"), Model: spec.Model, API: spec.OpenAIAPI,
			Azure: &openai.Azure{Endpoint: getenv("AZURE_OPENAI_ENDPOINT"), APIVersion: getenv("OPENAI_API_VERSION")}}
		if cfg.APIKey == "" && cfg.Azure.Endpoint != "" {
			cred, err := entraCredential(getenv)
			if err != nil {
				return nil, fmt.Errorf("azure: no API key (AZURE_OPENAI_API_KEY) and no Entra ID credential: %w", err)
			}
			cfg.Azure.Token = cred
		}
		return openai.New(cfg)
	}
	return nil, fmt.Errorf("the model runner has no provider %q", spec.Backend)
}

// awsEnvironment puts the AWS SDK's own settings back into the runner's
// environment, where its default chain reads them: AWS_* are secrets that dsh
// and the runner take out of it (secretenv), and they come in the spec. They
// are where the credentials are (another config file, a container's or a
// web identity's role, the instance's metadata) and how AWS is reached (a CA
// bundle, endpoints). The keys, region and profile are passed explicitly.
func awsEnvironment(getenv func(string) string) error {
	for _, name := range []string{"AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE",
		"AWS_ROLE_ARN", "AWS_ROLE_SESSION_NAME", "AWS_WEB_IDENTITY_TOKEN_FILE",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
		"AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
		"AWS_EC2_METADATA_DISABLED", "AWS_EC2_METADATA_SERVICE_ENDPOINT", "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE",
		"AWS_CA_BUNDLE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_STS", "AWS_USE_FIPS_ENDPOINT", "AWS_USE_DUALSTACK_ENDPOINT",
		"AWS_RETRY_MODE", "AWS_MAX_ATTEMPTS"} {
		err := os.Unsetenv(name)
		if v := getenv(name); v != "" {
			err = os.Setenv(name, v)
		}
		if err != nil {
			return fmt.Errorf("bedrock: %s: %w", name, err)
		}
	}
	return nil
}

// entraCredential is the Entra ID credential Azure OpenAI is reached with
// when there is no key. azidentity reads its settings from the process's
// environment, but AZURE_* are secrets that dsh and the runner take out of
// it (secretenv): they come in the spec instead, and the credentials they
// name are built from them. Without any, the default chain: a managed
// identity or az login.
func entraCredential(getenv func(string) string) (azcore.TokenCredential, error) {
	tenant, client, host := getenv("AZURE_TENANT_ID"), getenv("AZURE_CLIENT_ID"), getenv("AZURE_AUTHORITY_HOST")
	var o azcore.ClientOptions
	if host != "" {
		o.Cloud.ActiveDirectoryAuthorityHost = host
	}
	// A local authority (an emulator, a test) is none of Microsoft's clouds
	// to look up; any other is checked as azidentity does by default.
	local := openai.Loopback(host, "https")
	switch {
	case getenv("AZURE_CLIENT_SECRET") != "":
		return azidentity.NewClientSecretCredential(tenant, client, getenv("AZURE_CLIENT_SECRET"),
			&azidentity.ClientSecretCredentialOptions{ClientOptions: o, DisableInstanceDiscovery: local})
	case getenv("AZURE_CLIENT_CERTIFICATE_PATH") != "":
		b, err := os.ReadFile(getenv("AZURE_CLIENT_CERTIFICATE_PATH"))
		if err != nil {
			return nil, fmt.Errorf("the certificate AZURE_CLIENT_CERTIFICATE_PATH names: %w", err)
		}
		certs, key, err := azidentity.ParseCertificates(b, []byte(getenv("AZURE_CLIENT_CERTIFICATE_PASSWORD")))
		if err != nil {
			return nil, fmt.Errorf("the certificate AZURE_CLIENT_CERTIFICATE_PATH names: %w", err)
		}
		return azidentity.NewClientCertificateCredential(tenant, client, certs, key,
			&azidentity.ClientCertificateCredentialOptions{ClientOptions: o, DisableInstanceDiscovery: local})
	case getenv("AZURE_FEDERATED_TOKEN_FILE") != "":
		return azidentity.NewWorkloadIdentityCredential(&azidentity.WorkloadIdentityCredentialOptions{ClientOptions: o,
			ClientID: client, TenantID: tenant, TokenFilePath: getenv("AZURE_FEDERATED_TOKEN_FILE"), DisableInstanceDiscovery: local})
	}
	// The default chain reads a managed identity's settings from the
	// process's environment only: a user-assigned one's client id, and the
	// secret an App Service (IDENTITY_HEADER) or Azure ML (MSI_SECRET) hands
	// its apps. The runner's environment is its own, and they were taken
	// out of it; the spec is what counts, for every spec the runner serves.
	for _, name := range []string{"AZURE_CLIENT_ID", "IDENTITY_HEADER", "MSI_SECRET"} {
		err := os.Unsetenv(name)
		if v := getenv(name); v != "" {
			err = os.Setenv(name, v)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return azidentity.NewDefaultAzureCredential(&azidentity.DefaultAzureCredentialOptions{ClientOptions: o, TenantID: tenant,
		DisableInstanceDiscovery: local})
}

// List is the models spec's provider serves, asked of its server (only
// Anthropic's and OpenAI's list theirs).
func (Backend) List(ctx context.Context, spec remote.Spec) ([]models.Info, error) {
	switch spec.Backend {
	case "anthropic":
		cfg, err := anthropicConfig(spec.Getenv, "")
		if err != nil {
			return nil, err
		}
		return anthropic.Models(ctx, cfg)
	case "openai":
		return openai.Models(ctx, openAIConfig(spec.Getenv, ""))
	}
	return nil, fmt.Errorf("provider %s has no model list to ask", spec.Backend)
}

// Served is the first model spec's OpenAI-compatible server lists.
func (Backend) Served(ctx context.Context, spec remote.Spec) (string, error) {
	return openai.FirstServed(ctx, openAIConfig(spec.Getenv, ""))
}

// anthropicConfig reads Anthropic's settings as Claude Code does: a key, or a
// gateway's token and headers.
func anthropicConfig(getenv func(string) string, model string) (anthropic.Config, error) {
	h, err := provider.HeaderLines(getenv("ANTHROPIC_CUSTOM_HEADERS"))
	if err != nil {
		return anthropic.Config{}, fmt.Errorf("ANTHROPIC_CUSTOM_HEADERS: %w", err)
	}
	cfg := anthropic.Config{APIKey: getenv("ANTHROPIC_API_KEY"), AuthToken: getenv("ANTHROPIC_AUTH_TOKEN"), Headers: h,
		BaseURL: getenv("ANTHROPIC_BASE_URL"), Model: model}
	// Claude Code's apiKeyHelper, which dsh's side reads from its settings.
	if cfg.KeyHelper = getenv("DSH_ANTHROPIC_KEY_HELPER"); cfg.KeyHelper != "" {
		if v := getenv("CLAUDE_CODE_API_KEY_HELPER_TTL_MS"); v != "" {
			ms, err := strconv.ParseInt(v, 10, 64)
			if err != nil || ms <= 0 {
				return anthropic.Config{}, fmt.Errorf("CLAUDE_CODE_API_KEY_HELPER_TTL_MS: %q is not a positive number of milliseconds", v)
			}
			cfg.KeyHelperTTL = time.Duration(ms) * time.Millisecond
		}
	}
	return cfg, nil
}

func openAIConfig(getenv func(string) string, model string) openai.Config {
	return openai.Config{APIKey: getenv("OPENAI_API_KEY"), BaseURL: getenv("OPENAI_BASE_URL"), Model: model}
}

// first is the value of the first of names that is set.
func first(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if v := getenv(n); v != "" {
			return v
		}
	}
	return ""
}
