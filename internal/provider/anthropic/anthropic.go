// Package anthropic is the provider for Anthropic's Messages API, spoken through
// the official Go SDK: streaming, tool use and extended thinking.
//
// Thinking blocks come back with a signature that must be replayed verbatim in
// later requests; they travel as provider.PartThinking with Text and Signature.
// A redacted_thinking block has no text, only opaque data: it travels as a
// PartThinking whose Signature is RedactedPrefix followed by that data, which no
// real signature (base64) can start with, so the log needs no extra record kind.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/models"
)

// DefaultModel is used when neither the request nor the configuration names one.
const DefaultModel = models.DefaultAnthropic

// DefaultMaxTokens caps a response when the request sets no limit.
const DefaultMaxTokens = 16000

// ThinkingAdaptive as Config.Thinking lets the model decide when and how much to
// think (the only mode the newest models accept).
const ThinkingAdaptive = -1

// RedactedPrefix marks a PartThinking that holds a redacted_thinking block's data.
const RedactedPrefix = "redacted_thinking:"

// Config configures the provider. The caller reads the environment
// (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL); this package never does.
type Config struct {
	APIKey string
	// AuthToken is sent as "Authorization: Bearer", instead of the key (a
	// gateway's token: Claude Code's ANTHROPIC_AUTH_TOKEN).
	AuthToken string
	// KeyHelper, if set, is a command whose output is the credential (Claude
	// Code's apiKeyHelper), asked again after KeyHelperTTL (0: the default)
	// and after a 401. As in Claude Code, AuthToken and APIKey come first.
	KeyHelper    string
	KeyHelperTTL time.Duration
	// Headers are sent with every request (ANTHROPIC_CUSTOM_HEADERS).
	Headers    http.Header
	BaseURL    string // empty: the SDK's production endpoint
	Model      string // empty: DefaultModel
	MaxRetries int    // transient failures; 0: provider.DefaultMaxRetries, negative: none
	// Thinking is 0 for no extended thinking, a positive token budget for manual
	// thinking, or ThinkingAdaptive.
	Thinking   int
	HTTPClient *http.Client     // nil: http.DefaultClient
	Backoff    provider.Backoff // nil: provider.DefaultBackoff
	// Platform reaches Claude through a cloud (Bedrock, Vertex) with the
	// cloud's credentials; nil: Anthropic's API with APIKey. BaseURL, when
	// set, still decides where requests go (a proxy, a test server).
	Platform *Platform
}

// Provider streams messages from Anthropic.
type Provider struct {
	cfg      Config
	messages sdk.MessageService
}

// New returns a provider for cfg. An API key is required unless a base URL
// points somewhere else (a proxy may hold the credential).
func New(cfg Config) (*Provider, error) {
	if cfg.APIKey == "" && cfg.AuthToken == "" && cfg.KeyHelper == "" && cfg.BaseURL == "" && cfg.Platform == nil {
		return nil, &authError{"no Anthropic API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)"}
	}
	if cfg.Thinking > 0 && cfg.Thinking < 1024 {
		return nil, fmt.Errorf("anthropic: a thinking budget must be at least 1024 tokens, got %d", cfg.Thinking)
	}
	if cfg.Thinking < 0 && cfg.Thinking != ThinkingAdaptive {
		return nil, fmt.Errorf("anthropic: invalid thinking setting %d", cfg.Thinking)
	}
	// Retries are ours (provider.Retry), so they can stop once output reached the
	// caller; the SDK's own would resend a request whose stream already spoke.
	return &Provider{cfg: cfg, messages: sdk.NewMessageService(append(cfg.options(), option.WithMaxRetries(0))...)}, nil
}

// options are the SDK's options for cfg: the one place the provider and its
// model list are connected. The services are built without sdk.NewClient,
// which would read ANTHROPIC_* behind the caller's back unless told not to,
// and builds every service of the API, which keeps all their types in dsh's
// binary.
func (cfg Config) options() []option.RequestOption {
	hc := cfg.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	opts := []option.RequestOption{
		option.WithEnvironmentProduction(),
		option.WithHTTPClient(hc),
	}
	switch {
	case cfg.Platform != nil:
		opts = append(opts, cfg.Platform.options...)
	case cfg.AuthToken != "":
		opts = append(opts, option.WithAuthToken(cfg.AuthToken))
	case cfg.APIKey != "":
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	case cfg.KeyHelper != "":
		opts = append(opts, option.WithMiddleware(newKeyHelper(cfg.KeyHelper, cfg.KeyHelperTTL).middleware))
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	for k, vs := range cfg.Headers {
		for _, v := range vs {
			opts = append(opts, option.WithHeaderAdd(k, v))
		}
	}
	return opts
}

// Name implements provider.Provider.
func (p *Provider) Name() string {
	if p.cfg.Platform != nil {
		return p.cfg.Platform.Name
	}
	return "anthropic"
}

// Stream implements provider.Provider.
func (p *Provider) Stream(ctx context.Context, req provider.Request, onDelta func(provider.Delta)) (*provider.Response, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	return provider.Retry(ctx, p.cfg.MaxRetries, p.cfg.Backoff, func() (*provider.Response, error) {
		return p.attempt(ctx, params, onDelta)
	})
}

// errIncomplete is a stream that ended cleanly but without message_stop.
var errIncomplete = errors.New("the stream ended before the message was complete")

func (p *Provider) attempt(ctx context.Context, params sdk.MessageNewParams, onDelta func(provider.Delta)) (*provider.Response, error) {
	stream := p.messages.NewStreaming(ctx, params)
	defer func() { _ = stream.Close() }()

	var msg sdk.Message
	// The accumulator quietly replaces a tool input cut short by the token limit
	// with {}; keeping the raw fragments lets response tell a cut call from an
	// empty one.
	inputs := map[int64][]byte{}
	delivered, stopped := false, false
	openTool := "" // name of the tool_use block being streamed, if any
	for stream.Next() {
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			return nil, fmt.Errorf("anthropic: malformed stream: %w", err)
		}
		switch ev.Type {
		case "content_block_start":
			if ev.ContentBlock.Type == "tool_use" {
				openTool = ev.ContentBlock.Name
			}
		case "content_block_stop":
			openTool = ""
		case "content_block_delta":
			d := provider.Delta{}
			switch ev.Delta.Type {
			case "text_delta":
				d = provider.Delta{Type: provider.DeltaText, Text: ev.Delta.Text}
			case "thinking_delta":
				d = provider.Delta{Type: provider.DeltaThinking, Text: ev.Delta.Thinking}
			case "input_json_delta":
				inputs[ev.Index] = append(inputs[ev.Index], ev.Delta.PartialJSON...)
			}
			if d.Text != "" && onDelta != nil {
				delivered = true
				onDelta(d)
			}
		case "message_stop":
			stopped = true
		}
	}
	err := stream.Err()
	if err == nil && !stopped {
		err = errIncomplete
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if openTool != "" {
			err = fmt.Errorf("%w (in the middle of a %s tool call)", err, openTool)
		}
		return nil, classify(err, delivered, p.cfg)
	}
	return response(&msg, inputs)
}

// classify turns an SDK or transport error into the message the user reads,
// marked transient when resending the request may help and is safe: nothing of
// this response has been shown yet.
func classify(err error, delivered bool, cfg Config) error {
	platform := cfg.Platform
	transient := func(e error, h http.Header) error {
		if delivered {
			return fmt.Errorf("%w; the response was interrupted after it had started", e)
		}
		return &provider.TransientError{Err: e, RetryAfter: provider.RetryAfter(h)}
	}
	var apiErr *sdk.Error
	var auth *authError
	switch {
	case errors.As(err, &auth):
		return auth // the key helper failed: running it again at once would too
	case !errors.As(err, &apiErr):
		return transient(fmt.Errorf("anthropic: %w", err), nil)
	}
	var h http.Header
	if apiErr.Response != nil {
		h = apiErr.Response.Header
	}
	detail := string(apiErr.Type())
	if apiErr.Message != "" {
		detail = strings.TrimPrefix(detail+": "+apiErr.Message, ": ")
	}
	if detail != "" {
		detail = ": " + detail
	}
	code := apiErr.StatusCode
	if platform != nil && (code == http.StatusUnauthorized || code == http.StatusForbidden) {
		check := "the AWS credentials (AWS_PROFILE, AWS_ACCESS_KEY_ID, aws sso login) and the model's access in the Bedrock console"
		if platform.Name == "vertex" {
			check = "the Google credentials (gcloud auth application-default login) and the project's access to Claude"
		}
		return &authError{fmt.Sprintf("%s refused the request (%d%s). Check %s.", platform.Name, code, detail, check)}
	}
	cred, env := "API key", "ANTHROPIC_API_KEY"
	switch {
	case cfg.AuthToken != "":
		cred, env = "token", "ANTHROPIC_AUTH_TOKEN"
	case cfg.APIKey == "" && cfg.KeyHelper != "":
		cred, env = "key from apiKeyHelper", "what apiKeyHelper ("+cfg.KeyHelper+") prints"
	}
	switch {
	case code == http.StatusUnauthorized:
		return &authError{fmt.Sprintf("Anthropic rejected the %s (401). Check %s.", cred, env)}
	case code == http.StatusForbidden:
		return &authError{fmt.Sprintf("Anthropic refused the request for this %s (403%s). Check %s.", cred, detail, env)}
	case code == http.StatusTooManyRequests:
		return transient(fmt.Errorf("anthropic: rate limited (429%s)", detail), h)
	case code == 529 || apiErr.Type() == sdk.ErrorTypeOverloadedError:
		return transient(fmt.Errorf("anthropic: the API is overloaded (%d%s)", code, detail), h)
	case provider.RetryableStatus(code) || apiErr.Type() == sdk.ErrorTypeAPIError:
		return transient(fmt.Errorf("anthropic: server error (%d%s)", code, detail), h)
	default:
		return fmt.Errorf("anthropic: the request was rejected (%d%s)", code, detail)
	}
}

// authError carries a user-facing credential message and matches provider.ErrAuth.
type authError struct{ msg string }

func (e *authError) Error() string        { return e.msg }
func (e *authError) Is(target error) bool { return target == provider.ErrAuth }

// response converts a complete message into the provider's vocabulary; inputs
// holds the streamed input of each tool_use block by index.
func response(msg *sdk.Message, inputs map[int64][]byte) (*provider.Response, error) {
	stop := stopReason(msg.StopReason)
	parts := make([]provider.Part, 0, len(msg.Content))
	searches := map[string]int{} // server_tool_use id → its part
	uses := map[string]json.RawMessage{}
	for i, b := range msg.Content {
		switch b.Type {
		case "server_tool_use":
			args, streamed := inputs[int64(i)]
			if !streamed {
				args = b.Input
			}
			part, raw := searchUse(b, args)
			searches[b.ID], uses[b.ID] = len(parts), raw
			parts = append(parts, part)
		case "web_search_tool_result":
			if at, ok := searches[b.ToolUseID]; ok {
				parts[at] = searchResult(parts[at], uses[b.ToolUseID], b)
			}
		case "text":
			if b.Text != "" {
				parts = append(parts, provider.Part{Type: provider.PartText, Text: b.Text})
			}
		case "thinking":
			parts = append(parts, provider.Part{Type: provider.PartThinking, Text: b.Thinking, Signature: b.Signature})
		case "redacted_thinking":
			parts = append(parts, provider.Part{Type: provider.PartThinking, Signature: RedactedPrefix + b.Data})
		case "tool_use":
			args, streamed := inputs[int64(i)]
			if !streamed {
				args = b.Input
			}
			if len(args) == 0 {
				args = []byte(`{}`)
			}
			if !json.Valid(args) {
				if stop == provider.StopMaxTokens {
					continue // cut off by the token limit: not a call anyone can run
				}
				return nil, fmt.Errorf("anthropic: the model sent malformed input for the %s tool call", b.Name)
			}
			parts = append(parts, provider.Part{Type: provider.PartToolUse, ID: b.ID, Name: b.Name, Args: args})
		}
	}
	// A search with no result (cut short) cannot be replayed: the API wants both.
	parts = slices.DeleteFunc(parts, func(p provider.Part) bool { return p.Type == provider.PartWebSearch && p.Signature == "" })
	u := msg.Usage
	return &provider.Response{
		Message:      provider.Message{Role: provider.RoleAssistant, Parts: parts},
		StopReason:   stop,
		InputTokens:  u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
		OutputTokens: u.OutputTokens,
	}, nil
}

func stopReason(r sdk.StopReason) provider.StopReason {
	switch r {
	case sdk.StopReasonToolUse:
		return provider.StopToolUse
	case sdk.StopReasonMaxTokens, sdk.StopReasonModelContextWindowExceeded:
		return provider.StopMaxTokens
	case sdk.StopReasonRefusal:
		return provider.StopRefusal
	case sdk.StopReasonEndTurn, sdk.StopReasonStopSequence, sdk.StopReasonPauseTurn:
		return provider.StopEndTurn
	default:
		return provider.StopEndTurn
	}
}

// params builds the SDK request. Prompt-cache breakpoints go on the system prompt
// (or the last tool) and on the newest message, so each turn of the agent loop
// re-reads the conversation so far from the cache.
func (p *Provider) params(req provider.Request) (sdk.MessageNewParams, error) {
	model := req.Model
	if model == "" {
		model = p.cfg.Model
	}
	if model == "" {
		model = DefaultModel
	}
	model = models.ClaudeAlias(model) // Claude Code's opus, sonnet…
	if p.cfg.Platform != nil && p.cfg.Platform.Name == "bedrock" {
		model = models.BedrockModel(model)
	}
	maxTokens := int64(req.MaxTokens)
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	params := sdk.MessageNewParams{Model: model, MaxTokens: maxTokens}
	budget, effort, err := p.thinking(req.Thinking)
	if err != nil {
		return params, err
	}
	switch {
	case budget > 0:
		// The budget must stay below max_tokens and leave room for the answer.
		if int64(budget) >= maxTokens {
			params.MaxTokens = int64(budget) + DefaultMaxTokens
		}
		params.Thinking = sdk.ThinkingConfigParamOfEnabled(int64(budget))
	case budget == ThinkingAdaptive:
		// Newer models omit thinking text unless asked; the user should see it.
		params.Thinking = sdk.ThinkingConfigParamUnion{OfAdaptive: &sdk.ThinkingConfigAdaptiveParam{
			Display: sdk.ThinkingConfigAdaptiveDisplaySummarized,
		}}
		if effort != "" {
			params.OutputConfig.Effort = sdk.OutputConfigEffort(effort)
		}
	}
	for _, t := range req.Tools {
		schema := json.RawMessage(t.Schema)
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		tp := sdk.ToolParam{
			Name:        t.Name,
			InputSchema: param.Override[sdk.ToolInputSchemaParam](schema),
		}
		if t.Description != "" {
			tp.Description = sdk.String(t.Description)
		}
		params.Tools = append(params.Tools, sdk.ToolUnionParam{OfTool: &tp})
	}
	if req.System != "" {
		params.System = []sdk.TextBlockParam{{Text: req.System, CacheControl: sdk.NewCacheControlEphemeralParam()}}
	} else if n := len(params.Tools); n > 0 {
		params.Tools[n-1].OfTool.CacheControl = sdk.NewCacheControlEphemeralParam()
	}
	if req.WebSearch {
		params.Tools = append(params.Tools, webSearchTool())
	}
	for i, m := range req.Messages {
		blocks, err := blocksOf(m)
		if err != nil {
			return params, fmt.Errorf("anthropic: message %d: %w", i, err)
		}
		if len(blocks) == 0 {
			continue // e.g. only thinking from another provider, which cannot be replayed
		}
		switch m.Role {
		case provider.RoleUser:
			params.Messages = append(params.Messages, sdk.NewUserMessage(blocks...))
		case provider.RoleAssistant:
			params.Messages = append(params.Messages, sdk.NewAssistantMessage(blocks...))
		default:
			return params, fmt.Errorf("anthropic: message %d: unknown role %q", i, m.Role)
		}
	}
	if n := len(params.Messages); n > 0 {
		last := params.Messages[n-1]
		var blocks []sdk.ContentBlockParamUnion
		if last.OfUser != nil {
			blocks = last.OfUser.Content
		} else if last.OfAssistant != nil {
			blocks = last.OfAssistant.Content
		}
		if cc := blocks[len(blocks)-1].GetCacheControl(); cc != nil {
			*cc = sdk.NewCacheControlEphemeralParam()
		}
	}
	return params, nil
}

// thinking resolves a request's thinking level against the configuration:
// a budget (or ThinkingAdaptive, 0 for none) and an effort level.
func (p *Provider) thinking(level string) (budget int, effort string, err error) {
	switch level {
	case "":
		return p.cfg.Thinking, "", nil
	case "off":
		return 0, "", nil
	case "adaptive":
		return ThinkingAdaptive, "", nil
	case "low", "medium", "high", "xhigh", "max":
		return ThinkingAdaptive, level, nil
	}
	n, err := strconv.Atoi(level)
	if err != nil || n < 1024 {
		return 0, "", fmt.Errorf("anthropic: invalid thinking level %q", level)
	}
	return n, "", nil
}

// imageLimit is what the Messages API takes of one image: larger ones are
// scaled down by the API to this edge anyway, so sending more only costs.
var imageLimit = provider.ImageLimit{MaxEdge: 1568, MaxBytes: 5 << 20,
	Types: []string{"image/jpeg", "image/png", "image/gif", "image/webp"}}

func blocksOf(m provider.Message) ([]sdk.ContentBlockParamUnion, error) {
	var blocks []sdk.ContentBlockParamUnion
	for _, part := range m.Parts {
		switch part.Type {
		case provider.PartText:
			if part.Text != "" {
				blocks = append(blocks, sdk.NewTextBlock(part.Text))
			}
		case provider.PartThinking:
			switch {
			case strings.HasPrefix(part.Signature, provider.OpenAIReasoning):
				// OpenAI's reasoning, after a switch of provider: not Claude's to read.
			case strings.HasPrefix(part.Signature, RedactedPrefix):
				blocks = append(blocks, sdk.NewRedactedThinkingBlock(strings.TrimPrefix(part.Signature, RedactedPrefix)))
			case part.Signature != "":
				blocks = append(blocks, sdk.NewThinkingBlock(part.Signature, part.Text))
			}
		case provider.PartToolUse:
			args := json.RawMessage(part.Args)
			if len(args) == 0 {
				args = json.RawMessage(`{}`)
			}
			blocks = append(blocks, sdk.NewToolUseBlock(part.ID, args, part.Name))
		case provider.PartToolResult:
			blocks = append(blocks, toolResult(part))
		case provider.PartWebSearch:
			if !strings.HasPrefix(part.Signature, WebSearchPrefix) {
				continue // another provider's search: not Claude's to replay
			}
			bs, err := searchBlocks(part.Signature)
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, bs...)
		case provider.PartImage:
			for _, c := range part.Content {
				img, err := provider.FitImage(c, imageLimit)
				if err != nil {
					blocks = append(blocks, sdk.NewTextBlock("[an attached image could not be sent: "+err.Error()+"]"))
					continue
				}
				blocks = append(blocks, sdk.NewImageBlockBase64(img.MimeType, img.Data))
			}
		default:
			return nil, fmt.Errorf("unknown part type %q", part.Type)
		}
	}
	return blocks, nil
}

func toolResult(part provider.Part) sdk.ContentBlockParamUnion {
	r := sdk.ToolResultBlockParam{ToolUseID: part.ID}
	if part.IsError {
		r.IsError = sdk.Bool(true)
	}
	for _, c := range part.Content {
		if c.Type == "text" && c.Text == "" {
			continue // the API rejects empty text blocks
		}
		r.Content = append(r.Content, resultContent(c))
	}
	return sdk.ContentBlockParamUnion{OfToolResult: &r}
}

func resultContent(c card.Content) sdk.ToolResultBlockParamContentUnion {
	if c.Type == "image" {
		return sdk.ToolResultBlockParamContentUnion{OfImage: &sdk.ImageBlockParam{
			Source: sdk.ImageBlockParamSourceUnion{OfBase64: &sdk.Base64ImageSourceParam{
				Data:      c.Data,
				MediaType: sdk.Base64ImageSourceMediaType(c.MimeType),
			}},
		}}
	}
	return sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: c.Text}}
}
