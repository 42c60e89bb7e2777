// Package openai is the provider for OpenAI's Chat Completions API and the
// servers that speak it (ollama, llama.cpp, vLLM, …).
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

	"github.com/dsh-dev/dsh/internal/provider"
)

// DefaultModel is used when neither the request nor the configuration names one.
const DefaultModel = "gpt-5.5"

// Config configures the provider. The caller reads the environment
// (OPENAI_API_KEY, OPENAI_BASE_URL); this package never does.
type Config struct {
	APIKey     string
	BaseURL    string           // empty: api.openai.com; e.g. http://localhost:11434/v1 for ollama
	Model      string           // empty: DefaultModel
	MaxRetries int              // transient failures; 0: provider.DefaultMaxRetries, negative: none
	HTTPClient *http.Client     // nil: http.DefaultClient
	Backoff    provider.Backoff // nil: provider.DefaultBackoff
}

// Provider streams chat completions.
type Provider struct {
	cfg Config
	hc  *http.Client
}

// New returns a provider for cfg. The API key may be empty when a base URL is
// set: local servers usually need none.
func New(cfg Config) (*Provider, error) {
	if cfg.APIKey == "" && cfg.BaseURL == "" {
		return nil, &authError{"no OpenAI API key: set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server"}
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Provider{cfg: cfg, hc: hc}, nil
}

// Name implements provider.Provider.
func (p *Provider) Name() string { return "openai" }

// Stream implements provider.Provider.
func (p *Provider) Stream(ctx context.Context, req provider.Request, onDelta func(provider.Delta)) (*provider.Response, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	return provider.Retry(ctx, p.cfg.MaxRetries, p.cfg.Backoff, func() (*provider.Response, error) {
		return p.attempt(ctx, body, onDelta)
	})
}

// errIncomplete is a stream that ended without a finish_reason.
var errIncomplete = errors.New("the stream ended before the message was complete")

func (p *Provider) attempt(ctx context.Context, body []byte, onDelta func(provider.Delta)) (*provider.Response, error) {
	var acc accumulator
	var reasoning strings.Builder
	var malformed error // a chunk that cannot be part of this stream: not worth retrying
	delivered, finished := false, false
	openTool := "" // name of the latest tool call being streamed, if any
	emit := func(typ provider.DeltaType, text string) {
		if text != "" && onDelta != nil {
			delivered = true
			onDelta(provider.Delta{Type: typ, Text: text})
		}
	}
	onData := func(data []byte) error {
		var c streamChunk
		if err := json.Unmarshal(data, &c); err != nil {
			return fmt.Errorf("a stream chunk: %w", err)
		}
		if c.Choices == nil && c.Usage == nil {
			var e struct {
				Error json.RawMessage `json:"error"`
			}
			if json.Unmarshal(data, &e) == nil && e.Error != nil {
				return &streamError{raw: string(e.Error)}
			}
		}
		if !acc.add(&c) {
			malformed = fmt.Errorf("openai: malformed stream chunk: %s", data)
			return malformed
		}
		for _, ch := range c.Choices {
			if ch.Index != 0 {
				continue // we ask for one choice
			}
			if r := reasoningText(ch.Delta); r != "" {
				reasoning.WriteString(r)
				emit(provider.DeltaThinking, r)
			}
			emit(provider.DeltaText, ch.Delta.Content)
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Function.Name != "" {
					openTool = tc.Function.Name
				}
			}
			if ch.FinishReason != "" {
				finished = true
			}
		}
		return nil
	}
	resp, err := do(ctx, p.hc, http.MethodPost, endpoint(p.cfg.BaseURL, "/chat/completions"), p.cfg.APIKey, body)
	if err == nil {
		err = stream(resp.Body, onData)
		_ = resp.Body.Close()
		if errors.Is(err, errDone) {
			err = nil
		}
	}
	if malformed != nil {
		return nil, malformed
	}
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
// fields.
func reasoningText(d delta) string {
	if d.ReasoningContent != "" {
		return d.ReasoningContent
	}
	return d.Reasoning
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
	var apiErr *apiError
	if !errors.As(err, &apiErr) {
		if p.cfg.BaseURL != "" && errors.Is(err, syscall.ECONNREFUSED) {
			err = fmt.Errorf("%w (is the server at %s running?)", err, p.cfg.BaseURL)
		}
		return transient(fmt.Errorf("openai: %w", err), nil)
	}
	h := apiErr.Header
	detail := strconv.Itoa(apiErr.StatusCode)
	for _, s := range []string{apiErr.Code, apiErr.Message} {
		if s != "" {
			detail += ": " + s
		}
	}
	who := "OpenAI"
	if p.cfg.BaseURL != "" {
		who = "The server at " + p.cfg.BaseURL
	}
	switch code := apiErr.StatusCode; {
	case code == http.StatusUnauthorized:
		return &authError{who + " rejected the API key (401). Check OPENAI_API_KEY."}
	case code == http.StatusForbidden:
		return &authError{fmt.Sprintf("%s refused the request for this API key (%s). Check OPENAI_API_KEY.", who, detail)}
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
func response(acc *accumulator, reasoning string) (*provider.Response, error) {
	content, refusal := acc.content.String(), acc.refusal.String()
	var parts []provider.Part
	if reasoning != "" {
		parts = append(parts, provider.Part{Type: provider.PartThinking, Text: reasoning})
	}
	switch {
	case content != "":
		parts = append(parts, provider.Part{Type: provider.PartText, Text: content})
	case refusal != "":
		parts = append(parts, provider.Part{Type: provider.PartText, Text: refusal})
	}
	stop := provider.StopEndTurn
	switch acc.finishReason {
	case "length":
		stop = provider.StopMaxTokens
	case "content_filter":
		stop = provider.StopRefusal
	}
	if refusal != "" {
		stop = provider.StopRefusal
	}
	for i, tc := range acc.calls {
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
		InputTokens:  acc.usage.PromptTokens,
		OutputTokens: acc.usage.CompletionTokens,
	}, nil
}

// params builds the request body.
func (p *Provider) params(req provider.Request) (chatRequest, error) {
	model := req.Model
	if model == "" {
		model = p.cfg.Model
	}
	if model == "" {
		model = DefaultModel
	}
	params := chatRequest{Model: model, Stream: true, StreamOptions: streamOptions{IncludeUsage: true}}
	switch req.Thinking {
	case "", "off", "adaptive":
		// Nothing to ask for: a server that does not reason would refuse the field.
	case "low", "medium", "high", "xhigh", "max":
		params.ReasoningEffort = req.Thinking
	default:
		return params, fmt.Errorf("openai: thinking %q: Chat Completions takes an effort level (low … max), not a budget", req.Thinking)
	}
	if req.MaxTokens > 0 {
		// OpenAI's reasoning models accept only max_completion_tokens; the local
		// servers know max_tokens.
		if p.cfg.BaseURL == "" {
			params.MaxCompletionTokens = req.MaxTokens
		} else {
			params.MaxTokens = req.MaxTokens
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
		params.Tools = append(params.Tools, toolDef{Type: "function",
			Function: functionDef{Name: t.Name, Description: t.Description, Parameters: schema}})
	}
	if req.System != "" {
		params.Messages = append(params.Messages, message{Role: "system", Content: req.System})
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
func messagesOf(m provider.Message) ([]message, error) {
	var out []message
	var texts []string
	var images []contentPart
	var calls []toolCall
	for _, part := range m.Parts {
		switch part.Type {
		case provider.PartText:
			if part.Text != "" {
				texts = append(texts, part.Text)
			}
		case provider.PartThinking:
			// Chat Completions has no field to send reasoning back in.
		case provider.PartToolUse:
			args := string(part.Args)
			if args == "" {
				args = "{}"
			}
			calls = append(calls, toolCall{ID: part.ID, Type: "function",
				Function: functionCall{Name: part.Name, Arguments: args}})
		case provider.PartToolResult:
			out = append(out, message{Role: "tool", Content: toolResultText(part), ToolCallID: part.ID})
		case provider.PartImage:
			for _, c := range part.Content {
				img, err := provider.FitImage(c, imageLimit)
				if err != nil {
					texts = append(texts, "[an attached image could not be sent: "+err.Error()+"]")
					continue
				}
				images = append(images, contentPart{Type: "image_url",
					ImageURL: &imageURL{URL: "data:" + img.MimeType + ";base64," + img.Data}})
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
			var parts []contentPart
			if text != "" {
				parts = append(parts, contentPart{Type: "text", Text: text})
			}
			out = append(out, message{Role: "user", Content: append(parts, images...)})
		case text != "":
			out = append(out, message{Role: "user", Content: text})
		}
	case provider.RoleAssistant:
		if len(out) > 0 {
			return nil, errors.New("an assistant message cannot hold tool results")
		}
		if text == "" && len(calls) == 0 {
			return nil, nil // e.g. only reasoning
		}
		a := message{Role: "assistant", ToolCalls: calls}
		if text != "" {
			a.Content = text
		}
		out = append(out, a)
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
