package tool

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/invopop/jsonschema"
	jsv "github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var english = message.NewPrinter(language.English)

type schema struct {
	raw      jsontext.Value
	compiled *jsv.Schema
}

// schemaFor reflects P's JSON schema: fields without omitempty are required,
// unknown properties are refused, and descriptions come from `jsonschema` tags.
func schemaFor[P any]() (*schema, error) {
	r := &jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true, Anonymous: true}
	var p P
	s := r.Reflect(p)
	s.Version = "" // models want a bare object schema
	raw, err := stdjson.Marshal(s)
	if err != nil {
		return nil, err
	}
	doc, err := jsv.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsv.NewCompiler()
	if err := c.AddResource("params.json", doc); err != nil {
		return nil, err
	}
	compiled, err := c.Compile("params.json")
	if err != nil {
		return nil, err
	}
	return &schema{raw: jsontext.Value(raw), compiled: compiled}, nil
}

// validate checks args against the schema and phrases the first problems for a model.
func (s *schema) validate(args []byte) error {
	inst, err := jsv.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return fmt.Errorf("arguments are not valid JSON: %w", err)
	}
	err = s.compiled.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsv.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	var msgs []string
	collect(ve, &msgs)
	if len(msgs) == 0 {
		return errors.New(ve.Error())
	}
	return errors.New(strings.Join(msgs, "; "))
}

// collect gathers the leaf causes, which name the offending field.
func collect(ve *jsv.ValidationError, out *[]string) {
	if len(ve.Causes) == 0 {
		loc := "/" + strings.Join(ve.InstanceLocation, "/")
		*out = append(*out, fmt.Sprintf("at %s: %s", loc, ve.ErrorKind.LocalizedString(english)))
		return
	}
	for _, c := range ve.Causes {
		collect(c, out)
	}
}
