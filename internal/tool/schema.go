package tool

import (
	stdjson "encoding/json"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	gjs "github.com/google/jsonschema-go/jsonschema"
	"github.com/invopop/jsonschema"
)

type schema struct {
	raw      jsontext.Value
	resolved *gjs.Resolved
}

// schemaFor reflects P's JSON schema: fields without omitempty are required,
// unknown properties are refused, and descriptions, enums and bounds come from
// `jsonschema` struct tags. The validator is chosen for a cheap start-up: dsh acp
// must answer initialize within milliseconds of spawning.
func schemaFor[P any]() (*schema, error) {
	r := &jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true, Anonymous: true}
	var p P
	s := r.Reflect(p)
	s.Version = "" // models want a bare object schema
	raw, err := stdjson.Marshal(s)
	if err != nil {
		return nil, err
	}
	var g gjs.Schema
	if err := stdjson.Unmarshal(raw, &g); err != nil {
		return nil, err
	}
	resolved, err := g.Resolve(nil)
	if err != nil {
		return nil, err
	}
	return &schema{raw: jsontext.Value(raw), resolved: resolved}, nil
}

// validate checks args against the schema, phrasing the problem for a model.
func (s *schema) validate(args []byte) error {
	var inst any
	if err := stdjson.Unmarshal(args, &inst); err != nil {
		return fmt.Errorf("arguments are not valid JSON: %w", err)
	}
	if err := s.resolved.Validate(inst); err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "validating root: "))
	}
	return nil
}
