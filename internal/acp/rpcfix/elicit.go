package rpcfix

import (
	"context"
	"encoding/json"
	"fmt"
)

// Elicitation is a form-mode elicitation/create request as ACP 1.7.0 has it:
// scoped to a session and, where it is about one, a tool call — which the
// SDK's UnstableCreateElicitationForm cannot say.
type Elicitation struct {
	SessionID  string     `json:"sessionId"`
	ToolCallID string     `json:"toolCallId,omitempty"`
	Message    string     `json:"message"`
	Schema     FormSchema `json:"requestedSchema"`
}

// FormSchema is the form's flat object of properties.
type FormSchema struct {
	Properties map[string]Property `json:"properties"`
}

// Property is one field of a form: a string, free or one of OneOf.
type Property struct {
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	OneOf       []Option `json:"oneOf,omitempty"`
}

// Option is one choice of a property.
type Option struct {
	Const string `json:"const"`
	Title string `json:"title"`
}

// The actions of an elicitation's response.
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
	ActionCancel  = "cancel"
)

// Elicited is the client's response: what the user did, and what they
// entered when they accepted.
type Elicited struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// Elicit asks the user through the client's form; ctx ending cancels the
// request ($/cancel_request).
func (c *Conn) Elicit(ctx context.Context, e Elicitation) (Elicited, error) {
	params := struct {
		Mode string `json:"mode"`
		Elicitation
	}{"form", e}
	raw, err := c.Call(ctx, "elicitation/create", params)
	if err != nil {
		return Elicited{}, err
	}
	var r Elicited
	if err := json.Unmarshal(raw, &r); err != nil {
		return Elicited{}, fmt.Errorf("the client's elicitation response: %w", err)
	}
	return r, nil
}

// MarshalJSON writes a property as a string field of the form.
func (p Property) MarshalJSON() ([]byte, error) {
	type plain Property
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
	}{"string", plain(p)})
}

// MarshalJSON writes the form as the object schema it is.
func (s FormSchema) MarshalJSON() ([]byte, error) {
	type plain FormSchema
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
	}{"object", plain(s)})
}
