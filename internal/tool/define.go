package tool

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
)

// New erases P from a Spec. It panics if P's schema cannot be generated, which is a
// programming error caught by any test that builds the registry.
func New[P any](s Spec[P]) Tool {
	sch, err := schemaFor[P]()
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", s.Name, err))
	}
	return &typed[P]{spec: s, schema: sch}
}

type typed[P any] struct {
	spec   Spec[P]
	schema *schema
}

func (t *typed[P]) Name() string           { return t.spec.Name }
func (t *typed[P]) Description() string    { return t.spec.Description }
func (t *typed[P]) Schema() jsontext.Value { return t.schema.raw }
func (t *typed[P]) ReadOnly() bool         { return t.spec.ReadOnly }
func (t *typed[P]) Permission() Permission { return t.spec.Permission }
func (t *typed[P]) Kind() string           { return t.spec.Kind }

// decode decodes args strictly into P. With validate it first checks them
// against the schema, so the model hears which field is missing or mistyped and
// a call card never shows arguments the tool would refuse. PresentResult skips
// it: arguments the schema refuses produced an error result, which no result
// presenter renders, and the work would be repeated for every replayed call.
func (t *typed[P]) decode(args []byte, validate bool) (P, error) {
	var p P
	if len(strings.TrimSpace(string(args))) == 0 {
		args = []byte("{}")
	}
	if validate {
		if err := t.schema.validate(args); err != nil {
			return p, err
		}
	}
	if err := json.Unmarshal(args, &p, json.RejectUnknownMembers(true)); err != nil {
		return p, err
	}
	return p, nil
}

func (t *typed[P]) Run(ctx context.Context, env Env, args []byte) Result {
	p, err := t.decode(args, true)
	if err != nil {
		return Errorf("Invalid arguments for %s: %v", t.spec.Name, err)
	}
	return t.spec.Execute(ctx, env, p)
}

func (t *typed[P]) PresentCall(args []byte) card.Call {
	p, err := t.decode(args, true)
	if err != nil {
		return &card.GenericCall{Title: t.spec.Name, ToolKind: t.spec.Kind, RawInput: rawOrNil(args)}
	}
	return t.spec.PresentCall(p)
}

func (t *typed[P]) PresentResult(args []byte, r Result) card.Result {
	p, err := t.decode(args, false)
	if err != nil || t.spec.PresentResult == nil {
		return nil
	}
	return t.spec.PresentResult(p, r)
}

// rawOrNil returns args as a raw JSON value if they are valid JSON.
func rawOrNil(args []byte) card.RawJSON {
	v := jsontext.Value(args)
	if !v.IsValid() {
		return nil
	}
	return v.Clone()
}
