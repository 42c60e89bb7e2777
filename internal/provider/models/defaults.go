package models

import "strings"

// The vendors' default models: what a provider asks when neither the request
// nor the configuration names one. They live here, not beside the SDKs, so
// that dsh can say which model it will use without loading an SDK.
const (
	DefaultAnthropic = "claude-sonnet-5-5"
	DefaultOpenAI    = "gpt-5.5"
	// DefaultAzureAPIVersion is the Azure OpenAI API version asked when
	// OPENAI_API_VERSION names none.
	DefaultAzureAPIVersion = "2025-04-01-preview"
)

// BedrockModel is the Bedrock model id of an Anthropic model id: a global
// cross-region inference profile. An id that is already Bedrock's (it has a
// dot: anthropic.…, us.anthropic.…, an ARN) is kept.
func BedrockModel(id string) string {
	if strings.Contains(id, ".") || strings.HasPrefix(id, "arn:") {
		return id
	}
	return "global.anthropic." + id + "-v1:0"
}

// Platform are the models a cloud (bedrock, vertex) offers, from the table
// (the clouds list Claude's models through their own control-plane APIs,
// which the SDK does not speak), with the cloud's ids.
func Platform(name string) []Info {
	out := Builtin("anthropic")
	for i := range out {
		if name == "bedrock" {
			out[i].ID = BedrockModel(out[i].ID)
		}
		out[i].Provider = name
	}
	return out
}

// ClaudeAlias is the model id Claude Code's alias for Claude names: opus,
// sonnet, haiku and fable are the newest of their family in the table,
// default is DefaultAnthropic; sonnet[1m] is sonnet (dsh uses the whole
// window anyway), opusplan is opus. Any other name is returned as it is.
func ClaudeAlias(name string) string {
	a := strings.ToLower(strings.TrimSpace(name))
	switch a {
	case "default":
		return DefaultAnthropic
	case "sonnet[1m]":
		a = "sonnet"
	case "opusplan":
		a = "opus"
	case "opus", "sonnet", "haiku", "fable":
	default:
		return name
	}
	for _, e := range table { // newest first within a family
		if strings.HasPrefix(e.ID, "claude-"+a+"-") {
			return e.ID
		}
	}
	return name
}
