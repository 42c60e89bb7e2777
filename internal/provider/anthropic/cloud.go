package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2/bedrock"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// Platform is a cloud that serves Claude in place of Anthropic's API: the
// adaptation (its URL, body rewriting and request signing), and the
// provider's name.
type Platform struct {
	Name    string // "bedrock" or "vertex"
	options []option.RequestOption
}

// BedrockConfig is how Amazon Bedrock is reached: AWS's standard chain
// (environment, shared config and credentials files, SSO, instance roles)
// with the region and profile the caller read. Keys given here are used
// instead of the chain.
type BedrockConfig struct {
	Region, Profile                    string
	AccessKey, SecretKey, SessionToken string
	// BearerToken is a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK), sent in
	// place of a signature. The SDK would read it from the environment,
	// which dsh keeps keys out of.
	BearerToken string
	// CredentialExport is Claude Code's awsCredentialExport: a command that
	// prints STS-shaped JSON credentials, used instead of the chain and the
	// keys, and run again when they expire.
	CredentialExport string
}

// exportedFor is how long exported credentials without an Expiration are
// used before the command is run again.
const exportedFor = 15 * time.Minute

// exported runs an awsCredentialExport command for the credentials it prints:
// {"Credentials": {"AccessKeyId", "SecretAccessKey", "SessionToken",
// "Expiration"}}, as aws sts assume-role prints them, or the same keys at the
// top level, as aws configure export-credentials prints them (Claude Code
// takes both).
func exported(command string, now func() time.Time) aws.CredentialsProvider {
	return aws.CredentialsProviderFunc(func(ctx context.Context) (aws.Credentials, error) {
		out, err := runHelper(ctx, "awsCredentialExport", command)
		if err != nil {
			return aws.Credentials{}, err
		}
		type keys struct {
			AccessKeyID     string `json:"AccessKeyId"`
			SecretAccessKey string
			SessionToken    string
			Expiration      time.Time
		}
		var doc struct {
			keys
			Credentials *keys
		}
		c := &doc.keys
		err = json.Unmarshal([]byte(out), &doc)
		if doc.Credentials != nil {
			c = doc.Credentials
		}
		if err != nil || c.AccessKeyID == "" || c.SecretAccessKey == "" {
			return aws.Credentials{}, &authError{fmt.Sprintf(`Claude Code's awsCredentialExport (%s) printed no credentials: it should print {"Credentials": {"AccessKeyId": …, "SecretAccessKey": …, "SessionToken": …}}`, command)}
		}
		expires := c.Expiration
		if expires.IsZero() {
			expires = now().Add(exportedFor)
		}
		return aws.Credentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, SessionToken: c.SessionToken,
			Source: "awsCredentialExport", CanExpire: true, Expires: expires}, nil
	})
}

// Bedrock is the Bedrock platform for cfg. Credentials are resolved when a
// request is signed, so a missing one is reported on the prompt.
func Bedrock(ctx context.Context, cfg BedrockConfig) (*Platform, error) {
	var load []func(*awsconfig.LoadOptions) error
	if cfg.Region != "" {
		load = append(load, awsconfig.WithRegion(cfg.Region))
	}
	if cfg.Profile != "" {
		load = append(load, awsconfig.WithSharedConfigProfile(cfg.Profile))
	}
	switch {
	case cfg.CredentialExport != "":
		load = append(load, awsconfig.WithCredentialsProvider(aws.NewCredentialsCache(exported(cfg.CredentialExport, time.Now))))
	case cfg.AccessKey != "":
		load = append(load, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken)))
	}
	ac, err := awsconfig.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return nil, fmt.Errorf("bedrock: reading the AWS configuration: %w", err)
	}
	if ac.Region == "" {
		return nil, &authError{"bedrock: no AWS region: set AWS_REGION, or a region in the AWS profile"}
	}
	if cfg.BearerToken != "" {
		ac.AuthSchemePreference = []string{"httpBearerAuth"}
		ac.BearerAuthTokenProvider = bedrock.NewStaticBearerTokenProvider(cfg.BearerToken)
	}
	return &Platform{Name: "bedrock", options: []option.RequestOption{bedrock.WithConfig(ac)}}, nil
}

// VertexConfig is how Google Vertex AI is reached: Google's application
// default credentials, or the credentials file named, in the region and
// project given (the project defaults to the credentials').
type VertexConfig struct {
	Region, Project string
	// CredentialsJSON is a service account or user credentials file's
	// content; nil: the application default credentials.
	CredentialsJSON []byte
}

const cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

// Vertex is the Vertex AI platform for cfg.
func Vertex(ctx context.Context, cfg VertexConfig) (*Platform, error) {
	var creds *google.Credentials
	var err error
	if cfg.CredentialsJSON != nil {
		creds, err = credentialsFile(ctx, cfg.CredentialsJSON)
	} else {
		creds, err = google.FindDefaultCredentials(ctx, cloudPlatformScope)
	}
	if err != nil {
		return nil, &authError{fmt.Sprintf("vertex: no Google credentials (run gcloud auth application-default login, or set GOOGLE_APPLICATION_CREDENTIALS): %v", err)}
	}
	project := cfg.Project
	if project == "" {
		project = creds.ProjectID
	}
	if project == "" {
		return nil, &authError{"vertex: no Google Cloud project: set ANTHROPIC_VERTEX_PROJECT_ID or GOOGLE_CLOUD_PROJECT"}
	}
	region := cfg.Region
	if region == "" {
		region = "global"
	}
	return &Platform{Name: "vertex", options: []option.RequestOption{
		option.WithBaseURL(vertexBaseURL(region)),
		option.WithMiddleware(vertexMiddleware(region, project, creds.TokenSource)),
	}}, nil
}

// vertexBaseURL is the region's Vertex AI endpoint.
func vertexBaseURL(region string) string {
	switch region {
	case "global":
		return "https://aiplatform.googleapis.com/"
	case "us", "eu":
		return "https://aiplatform." + region + ".rep.googleapis.com/"
	}
	return "https://" + region + "-aiplatform.googleapis.com/"
}

// vertexMiddleware turns a Messages request into Vertex AI's rawPredict (or
// streamRawPredict) of the model, as the SDK's vertex package does: the
// model moves from the body to the path, the API version from the header to
// the body, and the request carries the credentials' OAuth token. The SDK's
// package is not used because it builds its HTTP client with
// google.golang.org/api/transport, whose gRPC stack grew dsh's binary by a
// third and its idle memory by half.
func vertexMiddleware(region, project string, tokens oauth2.TokenSource) option.Middleware {
	models := "/v1/projects/" + project + "/locations/" + region + "/publishers/anthropic/models/"
	rawModels := "/v1/projects/" + url.PathEscape(project) + "/locations/" + url.PathEscape(region) + "/publishers/anthropic/models/"
	return func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		version := r.Header.Get("anthropic-version")
		r.Header.Del("anthropic-version")
		if r.Method == http.MethodPost && r.URL.Path == "/v1/messages" && r.Body != nil {
			raw, err := io.ReadAll(r.Body)
			if err != nil {
				return nil, err
			}
			_ = r.Body.Close()
			var body map[string]json.RawMessage
			if err := json.Unmarshal(raw, &body); err != nil {
				return nil, fmt.Errorf("vertex: the request body: %w", err)
			}
			var model string
			var stream bool
			_ = json.Unmarshal(body["model"], &model)
			_ = json.Unmarshal(body["stream"], &stream)
			if model == "" {
				return nil, errors.New("vertex: the request names no model")
			}
			delete(body, "model")
			if _, ok := body["anthropic_version"]; !ok && version != "" {
				body["anthropic_version"], _ = json.Marshal(version)
			}
			if raw, err = json.Marshal(body); err != nil {
				return nil, err
			}
			method := "rawPredict"
			if stream {
				method = "streamRawPredict"
			}
			r.URL.Path = models + model + ":" + method
			r.URL.RawPath = rawModels + url.PathEscape(model) + ":" + method
			r.Body = io.NopCloser(bytes.NewReader(raw))
			r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }
			r.ContentLength = int64(len(raw))
		}
		tok, err := tokens.Token()
		if err != nil {
			return nil, &authError{fmt.Sprintf("vertex: getting a Google access token: %v", err)}
		}
		tok.SetAuthHeader(r)
		return next(r)
	}
}

// credentialsFile reads a credentials file of one of the kinds application
// default credentials take (the user named it; its kind is checked, not
// trusted to be any the library knows).
func credentialsFile(ctx context.Context, b []byte) (*google.Credentials, error) {
	var head struct {
		Type google.CredentialsType `json:"type"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("the credentials file is not JSON: %w", err)
	}
	switch head.Type {
	case google.ServiceAccount, google.AuthorizedUser, google.ExternalAccount, google.ImpersonatedServiceAccount,
		google.ExternalAccountAuthorizedUser:
		return google.CredentialsFromJSONWithType(ctx, b, head.Type, cloudPlatformScope)
	case google.GDCHServiceAccount:
		// Distributed Cloud's own accounts: Vertex AI's Claude is not there.
	}
	return nil, fmt.Errorf("the credentials file is of type %q, which Vertex AI does not take", head.Type)
}
