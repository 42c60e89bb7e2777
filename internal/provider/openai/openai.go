// Package openai is the provider for OpenAI's Chat Completions API and the
// servers that speak it (ollama, llama.cpp, vLLM, …), through the official Go SDK.
//
// Chat Completions has no signed thinking: reasoning text that local servers
// stream (reasoning_content or reasoning) is shown and kept as PartThinking, but
// never sent back. Images in tool results become a short text note.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"syscall"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/models"
)

// DefaultModel is used when neither the request nor the configuration names one.
const DefaultModel = models.DefaultOpenAI

// Config configures the provider. The caller reads the environment
// (OPENAI_API_KEY, OPENAI_BASE_URL); this package never does.
type Config struct {
	APIKey     string
	BaseURL    string           // empty: api.openai.com; e.g. http://localhost:11434/v1 for ollama
	Model      string           // empty: DefaultModel
	MaxRetries int              // transient failures; 0: provider.DefaultMaxRetries, negative: none
	HTTPClient *http.Client     // nil: http.DefaultClient
	Backoff    provider.Backoff // nil: provider.DefaultBackoff
	// API is APIChat or APIResponses; "": DefaultAPI for each request's model.
	API string
	// Azure, when set, reaches Azure OpenAI instead of BaseURL.
	Azure *Azure
}

// Provider streams chat completions.
type Provider struct {
	cfg         Config
	completions sdk.ChatCompletionService
	responses   responses.ResponseService
}

// New returns a provider for cfg. The API key may be empty when a base URL is
// set: local servers usually need none.
func New(cfg Config) (*Provider, error) {
	switch {
	case cfg.Azure != nil && cfg.Azure.Endpoint == "":
		return nil, &authError{"no Azure OpenAI endpoint: set AZURE_OPENAI_ENDPOINT"}
	case cfg.Azure != nil && cfg.APIKey == "" && cfg.Azure.Token == nil:
		return nil, &authError{"no Azure OpenAI credential: set AZURE_OPENAI_API_KEY, or sign in to Entra ID (az login)"}
	case cfg.Azure == nil && cfg.APIKey == "" && cfg.BaseURL == "":
		return nil, &authError{"no OpenAI API key: set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server"}
	}
	if cfg.API != "" && cfg.API != APIChat && cfg.API != APIResponses {
		return nil, fmt.Errorf("openai: api: want %s or %s, got %q", APIChat, APIResponses, cfg.API)
	}
	// Retries are ours (provider.Retry).
	opts := append(cfg.options(), option.WithMaxRetries(0))
	return &Provider{cfg: cfg, completions: sdk.NewChatCompletionService(opts...), responses: responses.NewResponseService(opts...)}, nil
}

// options are the SDK's options for cfg: the one place the provider and its
// model list are connected. The services are built without sdk.NewClient,
// which would read OPENAI_* from the environment behind the caller's back.
func (cfg Config) options() []option.RequestOption {
	hc := cfg.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	opts := []option.RequestOption{
		option.WithEnvironmentProduction(),
		option.WithHTTPClient(hc),
	}
	if cfg.Azure != nil {
		return append(opts, cfg.Azure.options(cfg.APIKey)...)
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	return opts
}

// Name implements provider.Provider.
func (p *Provider) Name() string {
	if p.cfg.Azure != nil {
		return "azure"
	}
	return "openai"
}

// Stream implements provider.Provider.
func (p *Provider) Stream(ctx context.Context, req provider.Request, onDelta func(provider.Delta)) (*provider.Response, error) {
	if model := p.model(req); p.api(model) == APIResponses {
		return p.streamResponses(ctx, req, model, onDelta)
	}
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	return provider.Retry(ctx, p.cfg.MaxRetries, p.cfg.Backoff, func() (*provider.Response, error) {
		return p.attempt(ctx, params, onDelta)
	})
}

// errIncomplete is a stream that ended without a finish_reason.
var errIncomplete = errors.New("the stream ended before the message was complete")

func (p *Provider) attempt(ctx context.Context, params sdk.ChatCompletionNewParams, onDelta func(provider.Delta)) (*provider.Response, error) {
	stream := p.completions.NewStreaming(ctx, params)
	defer func() { _ = stream.Close() }()

	var acc sdk.ChatCompletionAccumulator
	var reasoning strings.Builder
	delivered, finished := false, false
	openTool := "" // name of the latest tool call being streamed, if any
	emit := func(typ provider.DeltaType, text string) {
		if text != "" && onDelta != nil {
			delivered = true
			onDelta(provider.Delta{Type: typ, Text: text})
		}
	}
	for stream.Next() {
		chunk := stream.Current()
		if !acc.AddChunk(chunk) {
			return nil, fmt.Errorf("openai: malformed stream chunk: %s", chunk.RawJSON())
		}
		for _, c := range chunk.Choices {
			if c.Index != 0 {
				continue // we ask for one choice
			}
			if r := reasoningText(c.Delta); r != "" {
				reasoning.WriteString(r)
				emit(provider.DeltaThinking, r)
			}
			emit(provider.DeltaText, c.Delta.Content)
			for _, tc := range c.Delta.ToolCalls {
				if tc.Function.Name != "" {
					openTool = tc.Function.Name
				}
			}
			if c.FinishReason != "" {
				finished = true
			}
		}
	}
	err := stream.Err()
	if err == nil && !finished {
		err = errIncomplete
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if openTool != "" {
			err = fmt.Errorf("%w (in the middle of a %s tool call)", err, openTool)
		}
		return nil, p.classify(err, delivered)
	}
	return response(&acc, reasoning.String())
}

// reasoningText is the reasoning a local server streams outside the standard
// fields: reasoning_content (llama.cpp, vLLM, DeepSeek) or reasoning (ollama).
func reasoningText(d sdk.ChatCompletionChunkChoiceDelta) string {
	for _, key := range []string{"reasoning_content", "reasoning"} {
		if f, ok := d.JSON.ExtraFields[key]; ok {
			var s string
			if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
				return s
			}
		}
	}
	return ""
}

// classify turns an SDK or transport error into the message the user reads,
// marked transient when resending the request may help and is safe: nothing of
// this response has been shown yet.
func (p *Provider) classify(err error, delivered bool) error {
	transient := func(e error, h http.Header) error {
		if delivered {
			return fmt.Errorf("%w; the response was interrupted after it had started", e)
		}
		return &provider.TransientError{Err: e, RetryAfter: provider.RetryAfter(h)}
	}
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) {
		if p.cfg.BaseURL != "" && errors.Is(err, syscall.ECONNREFUSED) {
			err = fmt.Errorf("%w (is the server at %s running?)", err, p.cfg.BaseURL)
		}
		return transient(fmt.Errorf("openai: %w", err), nil)
	}
	var h http.Header
	if apiErr.Response != nil {
		h = apiErr.Response.Header
	}
	detail := strconv.Itoa(apiErr.StatusCode)
	for _, s := range []string{apiErr.Code, apiErr.Message} {
		if s != "" {
			detail += ": " + s
		}
	}
	who, check := "OpenAI", "OPENAI_API_KEY"
	switch {
	case p.cfg.Azure != nil:
		who, check = "Azure OpenAI at "+p.cfg.Azure.Endpoint, "AZURE_OPENAI_API_KEY or the Entra ID sign-in, and the deployment's name"
	case p.cfg.BaseURL != "":
		who = "The server at " + p.cfg.BaseURL
	}
	switch code := apiErr.StatusCode; {
	case code == http.StatusUnauthorized:
		return &authError{who + " rejected the API key (401). Check " + check + "."}
	case code == http.StatusForbidden:
		return &authError{fmt.Sprintf("%s refused the request for this API key (%s). Check %s.", who, detail, check)}
	case code == http.StatusTooManyRequests && apiErr.Code == "insufficient_quota":
		return fmt.Errorf("openai: the account has no quota left (%s)", detail)
	case code == http.StatusTooManyRequests:
		return transient(fmt.Errorf("openai: rate limited (%s)", detail), h)
	case provider.RetryableStatus(code):
		return transient(fmt.Errorf("openai: server error (%s)", detail), h)
	default:
		return fmt.Errorf("openai: the request was rejected (%s)", detail)
	}
}

// authError carries a user-facing credential message and matches provider.ErrAuth.
type authError struct{ msg string }

func (e *authError) Error() string        { return e.msg }
func (e *authError) Is(target error) bool { return target == provider.ErrAuth }

// response converts the accumulated completion into the provider's vocabulary.
func response(acc *sdk.ChatCompletionAccumulator, reasoning string) (*provider.Response, error) {
	if len(acc.Choices) == 0 {
		return nil, errors.New("openai: the response has no choices")
	}
	choice := acc.Choices[0]
	msg := choice.Message
	var parts []provider.Part
	if reasoning != "" {
		parts = append(parts, provider.Part{Type: provider.PartThinking, Text: reasoning})
	}
	switch {
	case msg.Content != "":
		parts = append(parts, provider.Part{Type: provider.PartText, Text: msg.Content})
	case msg.Refusal != "":
		parts = append(parts, provider.Part{Type: provider.PartText, Text: msg.Refusal})
	}
	stop := provider.StopEndTurn
	switch choice.FinishReason {
	case "length":
		stop = provider.StopMaxTokens
	case "content_filter":
		stop = provider.StopRefusal
	}
	if msg.Refusal != "" {
		stop = provider.StopRefusal
	}
	for i, tc := range msg.ToolCalls {
		args := []byte(tc.Function.Arguments)
		if len(strings.TrimSpace(tc.Function.Arguments)) == 0 {
			args = []byte(`{}`)
		}
		if !json.Valid(args) {
			if stop == provider.StopMaxTokens {
				continue // cut off by the token limit: not a call anyone can run
			}
			return nil, fmt.Errorf("openai: the model sent malformed arguments for the %s tool call", tc.Function.Name)
		}
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", i+1) // some local servers send none
		}
		parts = append(parts, provider.Part{Type: provider.PartToolUse, ID: id, Name: tc.Function.Name, Args: args})
		// Some servers finish a tool-calling message with "stop"; the calls decide.
		if stop == provider.StopEndTurn {
			stop = provider.StopToolUse
		}
	}
	return &provider.Response{
		Message:      provider.Message{Role: provider.RoleAssistant, Parts: parts},
		StopReason:   stop,
		InputTokens:  acc.Usage.PromptTokens,
		OutputTokens: acc.Usage.CompletionTokens,
	}, nil
}

// model is the model a request is for.
func (p *Provider) model(req provider.Request) string {
	switch {
	case req.Model != "":
		return req.Model
	case p.cfg.Model != "":
		return p.cfg.Model
	}
	return DefaultModel
}

// api is the API a request for model is sent through.
func (p *Provider) api(model string) string {
	if p.cfg.API != "" {
		return p.cfg.API
	}
	return DefaultAPI(model, p.cfg.BaseURL == "" || p.cfg.Azure != nil)
}

// params builds the SDK request.
func (p *Provider) params(req provider.Request) (sdk.ChatCompletionNewParams, error) {
	model := p.model(req)
	params := sdk.ChatCompletionNewParams{
		Model:         model,
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)},
	}
	switch req.Thinking {
	case "", "off", "adaptive":
		// Nothing to ask for: a server that does not reason would refuse the field.
	case "low", "medium", "high", "xhigh", "max":
		params.ReasoningEffort = shared.ReasoningEffort(req.Thinking)
	default:
		return params, fmt.Errorf("openai: thinking %q: Chat Completions takes an effort level (low … max), not a budget", req.Thinking)
	}
	if req.MaxTokens > 0 {
		// OpenAI's reasoning models accept only max_completion_tokens; the local
		// servers know max_tokens.
		if p.cfg.BaseURL == "" {
			params.MaxCompletionTokens = sdk.Int(int64(req.MaxTokens))
		} else {
			params.MaxTokens = sdk.Int(int64(req.MaxTokens))
		}
	}
	for _, t := range req.Tools {
		schema := map[string]any{"type": "object", "properties": map[string]any{}}
		if len(t.Schema) > 0 {
			schema = nil
			if err := json.Unmarshal(t.Schema, &schema); err != nil {
				return params, fmt.Errorf("openai: the schema of tool %s: %w", t.Name, err)
			}
		}
		fn := sdk.FunctionDefinitionParam{Name: t.Name, Parameters: sdk.FunctionParameters(schema)}
		if t.Description != "" {
			fn.Description = sdk.String(t.Description)
		}
		params.Tools = append(params.Tools, sdk.ChatCompletionFunctionTool(fn))
	}
	if req.System != "" {
		params.Messages = append(params.Messages, sdk.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		msgs, err := messagesOf(m)
		if err != nil {
			return params, fmt.Errorf("openai: message %d: %w", i, err)
		}
		params.Messages = append(params.Messages, msgs...)
	}
	return params, nil
}

// messagesOf converts one message. A user message with tool results becomes one
// tool message per result (they must directly follow the assistant's calls),
// then a user message for any text.
func messagesOf(m provider.Message) ([]sdk.ChatCompletionMessageParamUnion, error) {
	var out []sdk.ChatCompletionMessageParamUnion
	var texts []string
	var images []sdk.ChatCompletionContentPartUnionParam
	var calls []sdk.ChatCompletionMessageToolCallUnionParam
	for _, part := range m.Parts {
		switch part.Type {
		case provider.PartText:
			if part.Text != "" {
				texts = append(texts, part.Text)
			}
		case provider.PartThinking:
			// Chat Completions has no field to send reasoning back in.
		case provider.PartWebSearch:
			// Another API's search (Chat Completions offers none): its blocks are not ours to send.
		case provider.PartToolUse:
			args := string(part.Args)
			if args == "" {
				args = "{}"
			}
			calls = append(calls, sdk.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
					ID:       part.ID,
					Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: part.Name, Arguments: args},
				},
			})
		case provider.PartToolResult:
			out = append(out, sdk.ToolMessage(toolResultText(part), part.ID))
		case provider.PartImage:
			for _, c := range part.Content {
				img, err := provider.FitImage(c, imageLimit)
				if err != nil {
					texts = append(texts, "[an attached image could not be sent: "+err.Error()+"]")
					continue
				}
				images = append(images, sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{
					URL: "data:" + img.MimeType + ";base64," + img.Data}))
			}
		default:
			return nil, fmt.Errorf("unknown part type %q", part.Type)
		}
	}
	text := strings.Join(texts, "\n\n")
	switch m.Role {
	case provider.RoleUser:
		if len(calls) > 0 {
			return nil, errors.New("a user message cannot hold tool calls")
		}
		switch {
		case len(images) > 0:
			var parts []sdk.ChatCompletionContentPartUnionParam
			if text != "" {
				parts = append(parts, sdk.TextContentPart(text))
			}
			out = append(out, sdk.UserMessage(append(parts, images...)))
		case text != "":
			out = append(out, sdk.UserMessage(text))
		}
	case provider.RoleAssistant:
		if len(out) > 0 {
			return nil, errors.New("an assistant message cannot hold tool results")
		}
		if text == "" && len(calls) == 0 {
			return nil, nil // e.g. only reasoning
		}
		a := sdk.ChatCompletionAssistantMessageParam{ToolCalls: calls}
		if text != "" {
			a.Content.OfString = sdk.String(text)
		}
		out = append(out, sdk.ChatCompletionMessageParamUnion{OfAssistant: &a})
	default:
		return nil, fmt.Errorf("unknown role %q", m.Role)
	}
	return out, nil
}

// imageLimit is what OpenAI takes of one image: at high detail it scales an
// image to fit 2048 pixels, so more is never seen.
var imageLimit = provider.ImageLimit{MaxEdge: 2048, MaxBytes: 20 << 20,
	Types: []string{"image/jpeg", "image/png", "image/gif", "image/webp"}}

// toolResultText flattens a tool result to the string content every
// OpenAI-compatible server accepts.
func toolResultText(part provider.Part) string {
	var b strings.Builder
	if part.IsError {
		b.WriteString("Error: ")
	}
	for i, c := range part.Content {
		if i > 0 {
			b.WriteString("\n")
		}
		if c.Type == "image" {
			fmt.Fprintf(&b, "[image omitted: %s, %d bytes of base64]", c.MimeType, len(c.Data))
			continue
		}
		b.WriteString(c.Text)
	}
	return b.String()
}
