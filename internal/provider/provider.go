// Package provider is the model side of the agent loop: a provider streams one
// assistant message for a request. Implementations live in subpackages and speak
// their vendor's API through its official SDK.
package provider

import (
	"context"
	"errors"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
)

// Role is who said a message.
type Role string

// The roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// PartType says what a message part holds.
type PartType string

// The part types.
const (
	PartText       PartType = "text"
	PartThinking   PartType = "thinking"    // Text, Signature (the provider's, replayed verbatim)
	PartToolUse    PartType = "tool_use"    // ID, Name, Args (assistant)
	PartToolResult PartType = "tool_result" // ID, Content, IsError (user)
	PartImage      PartType = "image"       // Content: one image block (user)
	// PartWebSearch is a search the provider ran on its side (assistant): ID,
	// Text (the query), Sources, and Signature, the provider's own blocks,
	// which only that provider reads and replays verbatim.
	PartWebSearch PartType = "web_search"
)

// Source is a page a provider's web search found.
type Source struct {
	URL   string
	Title string
}

// OpenAIReasoning starts the Signature of a PartThinking that holds an OpenAI
// Responses reasoning item (package openai): every other provider leaves it
// out of its requests, as it does thinking with no signature.
const OpenAIReasoning = "openai-reasoning:"

// Part is one piece of a message.
type Part struct {
	Type      PartType
	Text      string
	Signature string
	ID        string
	Name      string
	Args      jsontext.Value
	Content   []card.Content
	IsError   bool
	Sources   []Source
}

// Message is one conversation message.
type Message struct {
	Role  Role
	Parts []Part
}

// ToolDef is a tool as the model sees it.
type ToolDef struct {
	Name        string
	Description string
	Schema      jsontext.Value
}

// Request is one model call.
type Request struct {
	Model     string
	System    string
	Messages  []Message
	Tools     []ToolDef
	MaxTokens int
	// Thinking is the thinking level: "" for the provider's configured one,
	// "off", "adaptive", an effort level (low, medium, high, xhigh, max) or a
	// token budget in decimal.
	Thinking string
	// WebSearch offers the provider's server-side web search tool where it
	// has one; a provider without one ignores it.
	WebSearch bool
}

// DeltaType says what a streaming delta carries.
type DeltaType string

// The delta types.
const (
	DeltaText     DeltaType = "text"
	DeltaThinking DeltaType = "thinking"
)

// Delta is a streamed fragment, for showing the message as it is written.
type Delta struct {
	Type DeltaType
	Text string
}

// StopReason says why the model stopped.
type StopReason string

// The stop reasons the loop acts on.
const (
	StopEndTurn   StopReason = "end_turn"
	StopToolUse   StopReason = "tool_use"
	StopMaxTokens StopReason = "max_tokens"
	StopRefusal   StopReason = "refusal"
)

// Response is one complete assistant message.
type Response struct {
	Message      Message // Role is RoleAssistant
	StopReason   StopReason
	InputTokens  int64
	OutputTokens int64
}

// Provider streams one assistant message. onDelta may be nil. A stream that breaks
// before the message is complete returns an error and no Response: nothing half is
// ever handed to the loop.
type Provider interface {
	Name() string
	Stream(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error)
}

// ErrAuth is wrapped by errors caused by a missing or rejected credential.
var ErrAuth = errors.New("authentication failed")
