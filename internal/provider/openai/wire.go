package openai

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/dsh-dev/dsh/internal/provider"
)

// dsh speaks Chat Completions itself rather than through the official SDK:
// the SDK is a third of dsh's binary and a third of its idle memory (its
// packages register every type of the whole OpenAI API at start-up), for the
// one streaming endpoint and the model list used here.

// productionURL is OpenAI's API, used when no base URL is configured.
const productionURL = "https://api.openai.com/v1"

// chatRequest is the body of POST /chat/completions.
type chatRequest struct {
	Model               string        `json:"model"`
	Messages            []message     `json:"messages"`
	Tools               []toolDef     `json:"tools,omitempty"`
	Stream              bool          `json:"stream"`
	StreamOptions       streamOptions `json:"stream_options"`
	MaxTokens           int           `json:"max_tokens,omitempty"`
	MaxCompletionTokens int           `json:"max_completion_tokens,omitempty"`
	ReasoningEffort     string        `json:"reasoning_effort,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type toolDef struct {
	Type     string      `json:"type"` // "function"
	Function functionDef `json:"function"`
}

type functionDef struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
}

// message is one message of the conversation. Content is a string, a list of
// contentParts (a user message with images), or absent (an assistant message
// that only calls tools).
type message struct {
	Role       string     `json:"role"`
	Content    any        `json:"content,omitempty"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type contentPart struct {
	Type     string    `json:"type"` // "text" or "image_url"
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

type toolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // "function"
	Function functionCall `json:"function"`
}

type functionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// streamChunk is one streamed chat.completion.chunk.
type streamChunk struct {
	ID      string        `json:"id"`
	Choices []chunkChoice `json:"choices"`
	Usage   *tokenUsage   `json:"usage"`
}

type chunkChoice struct {
	Index        int    `json:"index"`
	Delta        delta  `json:"delta"`
	FinishReason string `json:"finish_reason"`
}

// delta is a choice's increment. Reasoning comes outside the standard
// fields from local servers: reasoning_content (llama.cpp, vLLM, DeepSeek) or
// reasoning (ollama).
type delta struct {
	Content          string          `json:"content"`
	Refusal          string          `json:"refusal"`
	ReasoningContent string          `json:"reasoning_content"`
	Reasoning        string          `json:"reasoning"`
	ToolCalls        []toolCallDelta `json:"tool_calls"`
}

type toolCallDelta struct {
	Index    int          `json:"index"`
	ID       string       `json:"id"`
	Function functionCall `json:"function"`
}

type tokenUsage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

// maxToolCalls bounds the index of a streamed tool call: a server's index
// sizes a slice.
const maxToolCalls = 1024

// accumulator merges a stream's chunks into the message of choice 0.
type accumulator struct {
	id           string
	content      strings.Builder
	refusal      strings.Builder
	calls        []toolCall
	finishReason string
	usage        tokenUsage
}

// add merges c; false for a chunk that cannot belong to this stream (another
// completion's id, an impossible tool call index).
func (a *accumulator) add(c *streamChunk) bool {
	if c.ID != "" {
		if a.id != "" && a.id != c.ID {
			return false
		}
		a.id = c.ID
	}
	if c.Usage != nil {
		a.usage = *c.Usage
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // we ask for one choice
		}
		a.content.WriteString(ch.Delta.Content)
		a.refusal.WriteString(ch.Delta.Refusal)
		for _, tc := range ch.Delta.ToolCalls {
			if tc.Index < 0 || tc.Index >= maxToolCalls {
				return false
			}
			for len(a.calls) <= tc.Index {
				a.calls = append(a.calls, toolCall{Type: "function"})
			}
			call := &a.calls[tc.Index]
			if tc.ID != "" {
				call.ID = tc.ID
			}
			call.Function.Name += tc.Function.Name
			call.Function.Arguments += tc.Function.Arguments
		}
		if ch.FinishReason != "" {
			a.finishReason = ch.FinishReason
		}
	}
	return true
}

// apiError is a response with an error status, and what its body says.
type apiError struct {
	StatusCode int
	Header     http.Header
	Code       string
	Message    string
}

func (e *apiError) Error() string {
	s := fmt.Sprintf("%d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// streamError is an error the server sent inside the stream.
type streamError struct{ raw string }

func (e *streamError) Error() string { return "received error while streaming: " + e.raw }

// endpoint is base + path; base is a configured base URL (with or without a
// trailing slash) or "".
func endpoint(base, path string) string {
	if base == "" {
		base = productionURL
	}
	return strings.TrimSuffix(base, "/") + path
}

// do sends one request and returns the response of a 2xx status; any other
// status is an *apiError.
func do(ctx context.Context, hc *http.Client, method, url, apiKey string, body []byte) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", method, url, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20)) // the status says enough if the body is cut
	e := &apiError{StatusCode: resp.StatusCode, Header: resp.Header}
	var b struct {
		Error struct {
			Code    any    `json:"code"` // a string at OpenAI, a number at some servers
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &b) == nil {
		e.Message = b.Error.Message
		if b.Error.Code != nil {
			e.Code = fmt.Sprint(b.Error.Code)
		}
	}
	return nil, e
}

// stream reads a server-sent event stream and calls onData with each event's
// data until [DONE], the end of the body, or an error.
func stream(body io.Reader, onData func([]byte) error) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 16<<20) // a chunk may carry a long argument string
	var data []byte
	dispatch := func() error {
		if len(data) == 0 {
			return nil
		}
		d := data
		data = nil
		if bytes.HasPrefix(d, []byte("[DONE]")) {
			return errDone
		}
		return onData(d)
	}
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if err := dispatch(); err != nil {
				return err
			}
			continue
		}
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(v, []byte(" "))...)
		}
		// Other fields (event:, id:, retry:) and comments carry nothing here.
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return dispatch()
}

// errDone ends a stream at its [DONE] event.
var errDone = errors.New("done")

// ListModels returns the ids of the models the server at baseURL ("" for
// OpenAI's API) lists at GET /models. A transient failure (the connection, a
// retryable status) is tried once more after a short pause: a listing at
// start-up should ride out a blip, not hang on an outage.
func ListModels(ctx context.Context, hc *http.Client, baseURL, apiKey string) ([]string, error) {
	ids, err := listModels(ctx, hc, baseURL, apiKey)
	var ae *apiError
	if err == nil || ctx.Err() != nil || (errors.As(err, &ae) && !provider.RetryableStatus(ae.StatusCode)) {
		return ids, err
	}
	select {
	case <-ctx.Done():
		return nil, err
	case <-time.After(listRetryPause):
	}
	return listModels(ctx, hc, baseURL, apiKey)
}

// listRetryPause is the pause before ListModels tries again.
const listRetryPause = 500 * time.Millisecond

func listModels(ctx context.Context, hc *http.Client, baseURL, apiKey string) ([]string, error) {
	resp, err := do(ctx, hc, http.MethodGet, endpoint(baseURL, "/models"), apiKey, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	var page struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		return nil, fmt.Errorf("the model list: %w", err)
	}
	ids := make([]string, 0, len(page.Data))
	for _, m := range page.Data {
		ids = append(ids, m.ID)
	}
	return ids, nil
}
