package openai

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/dsh-dev/dsh/internal/provider"
)

// The APIs Config.API chooses between.
const (
	APIChat      = "chat"
	APIResponses = "responses"
)

// A PartThinking whose Signature starts with provider.OpenAIReasoning holds a
// Responses reasoning item (its id, summary and encrypted content, as JSON):
// the item is sent back verbatim in later requests, so the model keeps its
// reasoning across tool calls without OpenAI storing the conversation, and a
// reloaded session sends the same request. No Anthropic signature (base64)
// starts with the prefix, so each provider knows its own.

// reasoningModel matches OpenAI's own reasoning models, whose reasoning only
// the Responses API carries from turn to turn.
var reasoningModel = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(o[0-9]|gpt-5)`) })

// DefaultAPI is the API used for model when Config.API is "": Responses for
// OpenAI's own reasoning models on OpenAI's (or Azure's) endpoint, Chat
// Completions for everything else, which every compatible server speaks.
func DefaultAPI(model string, official bool) string {
	if official && reasoningModel().MatchString(model) {
		return APIResponses
	}
	return APIChat
}

// reasoning is the JSON kept in a provider.OpenAIReasoning signature.
type reasoning struct {
	ID               string   `json:"id"`
	Summary          []string `json:"summary"`
	EncryptedContent string   `json:"encrypted_content,omitempty"`
}

// outputItem is the part of a Responses output item dsh reads.
type outputItem struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	CallID           string          `json:"call_id"`
	Name             string          `json:"name"`
	Arguments        json.RawMessage `json:"arguments"`
	EncryptedContent string          `json:"encrypted_content"`
	Summary          []struct {
		Text string `json:"text"`
	} `json:"summary"`
	Content []struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Refusal     string `json:"refusal"`
		Annotations []struct {
			Type  string `json:"type"`
			URL   string `json:"url"`
			Title string `json:"title"`
		} `json:"annotations"`
	} `json:"content"`
}

func (p *Provider) streamResponses(ctx context.Context, req provider.Request, model string, onDelta func(provider.Delta)) (*provider.Response, error) {
	params, err := p.responsesParams(req, model)
	if err != nil {
		return nil, err
	}
	return provider.Retry(ctx, p.cfg.MaxRetries, p.cfg.Backoff, func() (*provider.Response, error) {
		return p.attemptResponses(ctx, params, onDelta)
	})
}

func (p *Provider) attemptResponses(ctx context.Context, params responses.ResponseNewParams, onDelta func(provider.Delta)) (*provider.Response, error) {
	stream := p.responses.NewStreaming(ctx, params)
	defer func() { _ = stream.Close() }()

	delivered := false
	openTool := ""
	emit := func(typ provider.DeltaType, text string) {
		if text != "" && onDelta != nil {
			delivered = true
			onDelta(provider.Delta{Type: typ, Text: text})
		}
	}
	var final *responses.Response
	var failure error
	code := "" // the failure's, when the server said why
	for stream.Next() && final == nil && failure == nil {
		ev := stream.Current()
		switch ev.Type {
		case "response.output_text.delta":
			emit(provider.DeltaText, ev.Delta)
		case "response.reasoning_summary_text.delta":
			emit(provider.DeltaThinking, ev.Delta)
		case "response.reasoning_summary_part.added":
			if ev.SummaryIndex > 0 {
				emit(provider.DeltaThinking, "\n\n")
			}
		case "response.output_item.added":
			if ev.Item.Type == "function_call" {
				openTool = ev.Item.Name
			}
		case "response.output_item.done":
			openTool = ""
		case "response.completed", "response.incomplete":
			r := ev.Response
			final = &r
		case "response.failed":
			code = string(ev.Response.Error.Code)
			failure = fmt.Errorf("the response failed: %s", strings.TrimPrefix(code+": "+ev.Response.Error.Message, ": "))
		case "error":
			code = ev.Code
			failure = fmt.Errorf("%s", strings.TrimPrefix(code+": "+ev.Message, ": "))
		}
	}
	err := failure
	if err == nil {
		err = stream.Err()
	}
	if err == nil && final == nil {
		err = errIncomplete
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if openTool != "" {
			err = fmt.Errorf("%w (in the middle of a %s tool call)", err, openTool)
		}
		if failure != nil && code != "server_error" && code != "rate_limit_exceeded" {
			return nil, fmt.Errorf("openai: %w", err) // resending the same request would fail the same way
		}
		return nil, p.classify(err, delivered)
	}
	return responsesResult(final)
}

// responsesResult converts a finished response into the provider's vocabulary.
func responsesResult(r *responses.Response) (*provider.Response, error) {
	stop := provider.StopEndTurn
	if r.Status == "incomplete" {
		switch r.IncompleteDetails.Reason {
		case "content_filter":
			stop = provider.StopRefusal
		default:
			stop = provider.StopMaxTokens
		}
	}
	var parts []provider.Part
	search := -1 // the part of the last web search, which the answer's citations come from
	for _, o := range r.Output {
		var it outputItem
		if err := json.Unmarshal([]byte(o.RawJSON()), &it); err != nil {
			return nil, fmt.Errorf("openai: a malformed output item: %w", err)
		}
		switch it.Type {
		case "reasoning":
			rs := reasoning{ID: it.ID, EncryptedContent: it.EncryptedContent, Summary: []string{}}
			for _, s := range it.Summary {
				rs.Summary = append(rs.Summary, s.Text)
			}
			sig, err := json.Marshal(rs)
			if err != nil {
				return nil, err
			}
			parts = append(parts, provider.Part{Type: provider.PartThinking, Text: strings.Join(rs.Summary, "\n\n"), Signature: provider.OpenAIReasoning + string(sig)})
		case "web_search_call":
			part, err := searchPart(o.RawJSON())
			if err != nil {
				return nil, err
			}
			search = len(parts)
			parts = append(parts, part)
		case "message":
			for _, c := range it.Content {
				for _, a := range c.Annotations {
					if a.Type == "url_citation" && search >= 0 {
						parts[search].Sources = addSource(parts[search].Sources, provider.Source{URL: a.URL, Title: a.Title})
					}
				}
				switch {
				case c.Type == "output_text" && c.Text != "":
					parts = append(parts, provider.Part{Type: provider.PartText, Text: c.Text})
				case c.Type == "refusal":
					parts = append(parts, provider.Part{Type: provider.PartText, Text: c.Refusal})
					stop = provider.StopRefusal
				}
			}
		case "function_call":
			var args string
			if err := json.Unmarshal(it.Arguments, &args); err != nil {
				return nil, fmt.Errorf("openai: the arguments of the %s tool call are not a string: %w", it.Name, err)
			}
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			if !json.Valid([]byte(args)) {
				if stop == provider.StopMaxTokens {
					continue // cut off by the token limit: not a call anyone can run
				}
				return nil, fmt.Errorf("openai: the model sent malformed arguments for the %s tool call", it.Name)
			}
			parts = append(parts, provider.Part{Type: provider.PartToolUse, ID: it.CallID, Name: it.Name, Args: []byte(args)})
			if stop == provider.StopEndTurn {
				stop = provider.StopToolUse
			}
		}
	}
	return &provider.Response{
		Message:      provider.Message{Role: provider.RoleAssistant, Parts: parts},
		StopReason:   stop,
		InputTokens:  r.Usage.InputTokens,
		OutputTokens: r.Usage.OutputTokens,
	}, nil
}

// responsesParams builds the Responses request. Nothing is stored at OpenAI:
// the whole conversation is sent each turn, reasoning as the encrypted items
// it came back as, and a cache key that stays the same for the conversation
// routes the turns to the server that holds its prompt cache.
func (p *Provider) responsesParams(req provider.Request, model string) (responses.ResponseNewParams, error) {
	params := responses.ResponseNewParams{
		Model: model,
		Store: param.NewOpt(false),
	}
	if req.System != "" {
		params.Instructions = param.NewOpt(req.System)
	}
	if req.MaxTokens > 0 {
		params.MaxOutputTokens = param.NewOpt(int64(req.MaxTokens))
	}
	switch req.Thinking {
	case "", "adaptive":
		if reasoningModel().MatchString(model) {
			params.Reasoning = shared.ReasoningParam{Summary: shared.ReasoningSummaryAuto}
		}
	case "off":
	case "low", "medium", "high", "xhigh", "max":
		effort := req.Thinking
		if effort == "max" {
			effort = "xhigh" // the most the Responses API takes
		}
		params.Reasoning = shared.ReasoningParam{Effort: shared.ReasoningEffort(effort), Summary: shared.ReasoningSummaryAuto}
	default:
		return params, fmt.Errorf("openai: thinking %q: the Responses API takes an effort level (low … max), not a budget", req.Thinking)
	}
	if params.Reasoning.Summary != "" {
		params.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
	}
	for _, t := range req.Tools {
		schema := map[string]any{"type": "object", "properties": map[string]any{}}
		if len(t.Schema) > 0 {
			schema = nil
			if err := json.Unmarshal(t.Schema, &schema); err != nil {
				return params, fmt.Errorf("openai: the schema of tool %s: %w", t.Name, err)
			}
		}
		tool := responses.ToolParamOfFunction(t.Name, schema, false)
		if t.Description != "" {
			tool.OfFunction.Description = param.NewOpt(t.Description)
		}
		params.Tools = append(params.Tools, tool)
	}
	if req.WebSearch {
		params.Tools = append(params.Tools, webSearchTool())
		params.Include = append(params.Include, responses.ResponseIncludableWebSearchCallActionSources)
	}
	var input responses.ResponseInputParam
	for i, m := range req.Messages {
		items, err := inputItems(m)
		if err != nil {
			return params, fmt.Errorf("openai: message %d: %w", i, err)
		}
		input = append(input, items...)
	}
	params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: input}
	params.PromptCacheKey = param.NewOpt(cacheKey(req))
	return params, nil
}

// cacheKey names the conversation for OpenAI's prompt cache: the system
// prompt and the first message, which every turn of it shares (and a reload
// too, so the replayed request is the same).
func cacheKey(req provider.Request) string {
	h := sha256.New()
	h.Write([]byte(req.System))
	if len(req.Messages) > 0 {
		for _, part := range req.Messages[0].Parts {
			h.Write([]byte{0})
			h.Write([]byte(part.Text))
		}
	}
	return "dsh-" + hex.EncodeToString(h.Sum(nil)[:16])
}

// inputItems converts one message into Responses input items, in order.
func inputItems(m provider.Message) ([]responses.ResponseInputItemUnionParam, error) {
	var out []responses.ResponseInputItemUnionParam
	var content responses.ResponseInputMessageContentListParam
	var text []string
	flush := func() {
		if len(text) == 0 && len(content) == 0 {
			return
		}
		joined := strings.Join(text, "\n\n")
		switch {
		case m.Role == provider.RoleAssistant || len(content) == 0:
			out = append(out, responses.ResponseInputItemParamOfMessage(joined, responses.EasyInputMessageRole(m.Role)))
		default:
			if joined != "" {
				content = append(responses.ResponseInputMessageContentListParam{{OfInputText: &responses.ResponseInputTextParam{Text: joined}}}, content...)
			}
			out = append(out, responses.ResponseInputItemParamOfMessage(content, responses.EasyInputMessageRoleUser))
		}
		text, content = nil, nil
	}
	for _, part := range m.Parts {
		switch part.Type {
		case provider.PartText:
			if part.Text != "" {
				text = append(text, part.Text)
			}
		case provider.PartThinking:
			raw, ok := strings.CutPrefix(part.Signature, provider.OpenAIReasoning)
			if !ok {
				continue // another provider's thinking, which this one cannot read
			}
			var rs reasoning
			if err := json.Unmarshal([]byte(raw), &rs); err != nil {
				return nil, fmt.Errorf("a logged reasoning item: %w", err)
			}
			flush()
			item := responses.ResponseReasoningItemParam{ID: rs.ID, Summary: []responses.ResponseReasoningItemSummaryParam{}}
			for _, s := range rs.Summary {
				item.Summary = append(item.Summary, responses.ResponseReasoningItemSummaryParam{Text: s})
			}
			if rs.EncryptedContent != "" {
				item.EncryptedContent = param.NewOpt(rs.EncryptedContent)
			}
			out = append(out, responses.ResponseInputItemUnionParam{OfReasoning: &item})
		case provider.PartWebSearch:
			if item := searchItem(part.Signature); item != nil {
				flush()
				out = append(out, *item)
			}
		case provider.PartToolUse:
			flush()
			args := string(part.Args)
			if args == "" {
				args = "{}"
			}
			out = append(out, responses.ResponseInputItemParamOfFunctionCall(args, part.ID, part.Name))
		case provider.PartToolResult:
			flush()
			out = append(out, responses.ResponseInputItemParamOfFunctionCallOutput(toolResultText(part)))
			out[len(out)-1].OfFunctionCallOutput.CallID = param.NewOpt(part.ID)
		case provider.PartImage:
			if m.Role != provider.RoleUser {
				return nil, errors.New("only a user message can hold images")
			}
			for _, c := range part.Content {
				img, err := provider.FitImage(c, imageLimit)
				if err != nil {
					text = append(text, "[an attached image could not be sent: "+err.Error()+"]")
					continue
				}
				content = append(content, responses.ResponseInputContentUnionParam{OfInputImage: &responses.ResponseInputImageParam{
					Detail: responses.ResponseInputImageDetailAuto, ImageURL: param.NewOpt("data:" + img.MimeType + ";base64," + img.Data)}})
			}
		default:
			return nil, fmt.Errorf("unknown part type %q", part.Type)
		}
	}
	flush()
	return out, nil
}
