package tool

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	gjs "github.com/google/jsonschema-go/jsonschema"

	"github.com/dsh-dev/dsh/internal/card"
)

// Dynamic declares a tool whose parameter schema is known only at run time (an
// MCP server's tool). Its cards are generic: the call shows its raw input, the
// result its content (text and images).
type Dynamic struct {
	Name        string
	Title       string // the call card's title; Name when empty
	Description string
	Guidance    string
	Schema      jsontext.Value // a JSON schema of an object
	ReadOnly    bool
	Permission  Permission
	Kind        card.ToolKind
	// Execute runs the call with arguments that passed the schema. An error is a
	// harness failure; the model's failures are error results.
	Execute func(ctx context.Context, env Env, args jsontext.Value) (Result, error)
}

// NewDynamic checks the schema and returns the tool.
func NewDynamic(d Dynamic) (Tool, error) {
	if d.Name == "" || d.Execute == nil {
		return nil, errors.New("a dynamic tool needs a name and Execute")
	}
	if len(d.Schema) == 0 {
		d.Schema = jsontext.Value(`{"type":"object"}`)
	}
	resolved, err := resolve(d.Schema) // now: a server's schema that does not resolve is refused
	if err != nil {
		return nil, fmt.Errorf("tool %s: schema: %w", d.Name, err)
	}
	if d.Kind == "" {
		d.Kind = card.ToolOther
	}
	if d.Title == "" {
		d.Title = d.Name
	}
	return &dynamic{d: d, schema: &schema{raw: d.Schema.Clone(), resolved: func() (*gjs.Resolved, error) { return resolved, nil }}}, nil
}

type dynamic struct {
	d      Dynamic
	schema *schema
}

func (t *dynamic) Name() string           { return t.d.Name }
func (t *dynamic) Description() string    { return t.d.Description }
func (t *dynamic) Guidance() string       { return t.d.Guidance }
func (t *dynamic) Schema() jsontext.Value { return t.schema.raw }
func (t *dynamic) ReadOnly() bool         { return t.d.ReadOnly }
func (t *dynamic) Permission() Permission { return t.d.Permission }
func (t *dynamic) Kind() card.ToolKind    { return t.d.Kind }

func (t *dynamic) args(args []byte) (jsontext.Value, error) {
	v := jsontext.Value(args)
	if len(v) == 0 {
		v = jsontext.Value("{}")
	}
	if err := t.schema.validate(v); err != nil {
		return nil, err
	}
	return v, nil
}

func (t *dynamic) Approval(args []byte) Approval {
	if _, err := t.args(args); err != nil {
		return Approval{}
	}
	return Approval{Keys: []string{"tool:" + t.d.Name}, Label: t.d.Name, Remember: true, Opaque: true}
}

// Preview logs the call card's title and kind with the call: they come from the
// server's metadata, which a replay (dsh replay, the web page, a reload
// without the server) does not have.
func (t *dynamic) Preview(context.Context, Env, []byte) (jsontext.Value, *Result) {
	b, err := json.Marshal(loggedCall{Title: t.d.Title, Kind: t.d.Kind}, json.Deterministic(true))
	if err != nil {
		return nil, nil
	}
	return b, nil
}

func (t *dynamic) Run(ctx context.Context, env Env, args []byte, _ jsontext.Value) (Result, error) {
	v, err := t.args(args)
	if err != nil {
		return Errorf("Invalid arguments for %s: %v", t.d.Name, err), nil
	}
	r, err := t.d.Execute(ctx, env, v)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", t.d.Name, err)
	}
	r.Meta = nil // dynamic tools carry no meta: their cards show the content
	return r, nil
}

func (t *dynamic) PresentCall(args []byte, preview jsontext.Value) card.Call {
	return presentLogged(t.d.Name, args, preview)
}

func (t *dynamic) PresentResult(_ []byte, r Result) card.Result { return presentLoggedResult(r) }

// loggedCall is a dynamic tool's preview.
type loggedCall struct {
	Title string        `json:"title"`
	Kind  card.ToolKind `json:"kind,omitempty"`
}

// presentLogged is the call card of a dynamic tool, or of a tool this registry
// does not have (a replay without the MCP server): a pure function of the
// call's record, so live and replay show the same card.
func presentLogged(name string, args []byte, preview jsontext.Value) card.Call {
	c := &card.GenericCall{Title: name, ToolKind: card.ToolOther, RawInput: rawOrNil(args)}
	var p loggedCall
	if len(preview) > 0 && json.Unmarshal(preview, &p) == nil && p.Title != "" {
		c.Title = p.Title
		if p.Kind != "" {
			c.ToolKind = p.Kind
		}
	}
	return c
}

// presentLoggedResult is the result card of a dynamic or an unknown tool: its
// content, or nil (raw) for an error or an empty result.
func presentLoggedResult(r Result) card.Result {
	if r.IsError || len(r.Content) == 0 {
		return nil
	}
	return &card.GenericResult{Content: r.Content}
}

func (t *dynamic) Fold(*Session, []byte, Result) {}

func (t *dynamic) Touched([]byte, Result) []string { return nil }
