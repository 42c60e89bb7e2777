package openai

import (
	"net"
	"net/url"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"

	"github.com/dsh-dev/dsh/internal/provider/models"
)

// DefaultAzureAPIVersion is the Azure OpenAI API version when none is set:
// one that serves both Chat Completions and Responses.
const DefaultAzureAPIVersion = models.DefaultAzureAPIVersion

// Azure is how Azure OpenAI is reached: the resource's endpoint, the API
// version, and an API key (Config.APIKey) or an Entra ID token credential.
// The model a request names is the deployment's name.
type Azure struct {
	Endpoint   string // https://RESOURCE.openai.azure.com
	APIVersion string // "": DefaultAzureAPIVersion
	// Token, when set, authenticates with Entra ID instead of the key.
	Token azcore.TokenCredential
}

// options are the SDK's Azure options, in place of OpenAI's endpoint and key.
func (a *Azure) options(apiKey string) []option.RequestOption {
	version := a.APIVersion
	if version == "" {
		version = DefaultAzureAPIVersion
	}
	opts := []option.RequestOption{azure.WithEndpoint(a.Endpoint, version)}
	if a.Token != nil {
		opts = append(opts, azure.WithTokenCredential(a.Token))
	} else {
		opts = append(opts, azure.WithAPIKey(apiKey))
	}
	if Loopback(a.Endpoint, "http") {
		// A local proxy or test server: the SDK sends credentials over plain
		// HTTP only when told, and only to loopback.
		opts = append(opts, azure.WithUnsafeAllowHTTP())
	}
	return opts
}

// Loopback says whether rawURL is a URL of this machine with the scheme: a
// local proxy, emulator or test server.
func Loopback(rawURL, scheme string) bool {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != scheme {
		return false
	}
	ip := net.ParseIP(u.Hostname())
	return u.Hostname() == "localhost" || (ip != nil && ip.IsLoopback())
}
