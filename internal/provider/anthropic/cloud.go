package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2/bedrock"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/vertex"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"golang.org/x/oauth2/google"

	"github.com/dsh-dev/dsh/internal/provider/models"
)

// Platform is a cloud that serves Claude in place of Anthropic's API: the
// SDK's own adaptation (its URL, body rewriting and request signing), and
// the provider's name.
type Platform struct {
	Name   string // "bedrock" or "vertex"
	option option.RequestOption
}

// BedrockConfig is how Amazon Bedrock is reached: AWS's standard chain
// (environment, shared config and credentials files, SSO, instance roles)
// with the region and profile the caller read. Keys given here are used
// instead of the chain.
type BedrockConfig struct {
	Region, Profile                    string
	AccessKey, SecretKey, SessionToken string
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
	if cfg.AccessKey != "" {
		load = append(load, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken)))
	}
	ac, err := awsconfig.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return nil, fmt.Errorf("bedrock: reading the AWS configuration: %w", err)
	}
	if ac.Region == "" {
		return nil, &authError{"bedrock: no AWS region: set AWS_REGION, or a region in the AWS profile"}
	}
	return &Platform{Name: "bedrock", option: bedrock.WithConfig(ac)}, nil
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
	return &Platform{Name: "vertex", option: vertex.WithCredentials(ctx, region, project, creds)}, nil
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

// BedrockModel is the Bedrock model id of an Anthropic model id: a global
// cross-region inference profile. An id that is already Bedrock's (it has a
// dot: anthropic.…, us.anthropic.…, an ARN) is kept.
func BedrockModel(id string) string {
	if strings.Contains(id, ".") || strings.HasPrefix(id, "arn:") {
		return id
	}
	return "global.anthropic." + id + "-v1:0"
}

// PlatformModels are the models a cloud offers, from the model table (the
// clouds list Claude's models through their own control-plane APIs, which the
// SDK does not speak), with the cloud's ids.
func PlatformModels(name string) []models.Info {
	out := models.Builtin("anthropic")
	for i := range out {
		if name == "bedrock" {
			out[i].ID = BedrockModel(out[i].ID)
		}
		out[i].Provider = name
	}
	return out
}
