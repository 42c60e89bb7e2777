package tool

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"
	gjs "github.com/google/jsonschema-go/jsonschema"
	"github.com/invopop/jsonschema"

	"github.com/dsh-dev/dsh/internal/jsonfast"
)

type schema struct {
	raw jsontext.Value
	// required are the top-level members every call has; a generated schema
	// decodes them on the first call that checks them.
	required func() []string
	// resolved is the validator, built on the first call that is validated:
	// opening a session needs only raw (the model's tool list), and a
	// process that answers session/new should not pay for it.
	resolved func() (*gjs.Resolved, error)

	// passed are the last arguments that passed, kept if small: a call's
	// arguments are checked for its permission step and again to run it.
	mu     sync.Mutex
	passed []byte
}

// maxPassed bounds the arguments schema.passed keeps.
const maxPassed = 16 << 10

// resolve builds the validator of a JSON schema.
func resolve(raw []byte) (*gjs.Resolved, error) {
	g, ok := simpleSchema(raw)
	if !ok {
		g = new(gjs.Schema)
		if err := stdjson.Unmarshal(raw, g); err != nil {
			return nil, err
		}
	}
	return g.Resolve(nil)
}

// simpleSchema decodes a schema of the keywords dsh's own tools use as
// gjs.Schema's UnmarshalJSON would, without encoding/json's reflection of that
// type (most of the first check of a call: dsh tool runs one). Any other keyword
// or shape says no, and the schema is decoded the general way.
func simpleSchema(raw []byte) (*gjs.Schema, bool) {
	d := jsontext.NewDecoder(bytes.NewReader(raw))
	g, ok := decodeSimple(d)
	if !ok {
		return nil, false
	}
	if _, err := d.ReadToken(); !errors.Is(err, io.EOF) {
		return nil, false
	}
	return g, true
}

func decodeSimple(d *jsontext.Decoder) (*gjs.Schema, bool) {
	if t, err := d.ReadToken(); err != nil || t.Kind() != '{' {
		return nil, false
	}
	g := &gjs.Schema{}
	for d.PeekKind() == '"' {
		k, err := d.ReadToken()
		if err != nil {
			return nil, false
		}
		ok := true
		switch k.String() {
		case "type":
			g.Type, ok = simpleString(d)
		case "description":
			g.Description, ok = simpleString(d)
		case "pattern":
			g.Pattern, ok = simpleString(d)
		case "properties":
			g.Properties, ok = simpleProperties(d)
		case "additionalProperties":
			if k := d.PeekKind(); k == 'f' || k == 't' {
				t, _ := d.ReadToken()
				g.AdditionalProperties = &gjs.Schema{}
				if !t.Bool() {
					g.AdditionalProperties.Not = &gjs.Schema{} // the schema false
				}
			} else {
				g.AdditionalProperties, ok = decodeSimple(d)
			}
		case "items":
			g.Items, ok = decodeSimple(d)
		case "required":
			g.Required, ok = simpleStrings(d)
		case "enum":
			var names []string
			names, ok = simpleStrings(d)
			g.Enum = make([]any, len(names))
			for i, n := range names {
				g.Enum[i] = n
			}
		case "minimum":
			g.Minimum, ok = simpleFloat(d)
		case "maximum":
			g.Maximum, ok = simpleFloat(d)
		case "minLength":
			g.MinLength, ok = simpleInt(d)
		case "maxLength":
			g.MaxLength, ok = simpleInt(d)
		case "minItems":
			g.MinItems, ok = simpleInt(d)
		case "maxItems":
			g.MaxItems, ok = simpleInt(d)
		default:
			return nil, false
		}
		if !ok {
			return nil, false
		}
	}
	if t, err := d.ReadToken(); err != nil || t.Kind() != '}' {
		return nil, false
	}
	return g, true
}

func simpleString(d *jsontext.Decoder) (string, bool) {
	t, err := d.ReadToken()
	return t.String(), err == nil && t.Kind() == '"'
}

func simpleStrings(d *jsontext.Decoder) ([]string, bool) {
	if t, err := d.ReadToken(); err != nil || t.Kind() != '[' {
		return nil, false
	}
	out := []string{}
	for d.PeekKind() == '"' {
		s, _ := simpleString(d)
		out = append(out, s)
	}
	t, err := d.ReadToken()
	return out, err == nil && t.Kind() == ']'
}

func simpleProperties(d *jsontext.Decoder) (map[string]*gjs.Schema, bool) {
	if t, err := d.ReadToken(); err != nil || t.Kind() != '{' {
		return nil, false
	}
	props := map[string]*gjs.Schema{}
	for d.PeekKind() == '"' {
		name, _ := simpleString(d)
		sub, ok := decodeSimple(d)
		if !ok {
			return nil, false
		}
		props[name] = sub
	}
	t, err := d.ReadToken()
	return props, err == nil && t.Kind() == '}'
}

func simpleFloat(d *jsontext.Decoder) (*float64, bool) {
	t, err := d.ReadToken()
	if err != nil || t.Kind() != '0' {
		return nil, false
	}
	f, err := strconv.ParseFloat(t.String(), 64)
	return &f, err == nil
}

// simpleInt reads an integer keyword; a number with a fraction or exponent, or
// past int32, goes the general way.
func simpleInt(d *jsontext.Decoder) (*int, bool) {
	t, err := d.ReadToken()
	if err != nil || t.Kind() != '0' {
		return nil, false
	}
	n, err := strconv.ParseInt(t.String(), 10, 32)
	i := int(n)
	return &i, err == nil
}

//go:generate go test -run TestGeneratedSchemas . -update

// reflections counts the schemas reflected, for the test that opening a
// session reflects none.
var reflections atomic.Int64

// schemas holds each parameter type's schema, built on first use and shared
// read-only by every tool of that type in the process: reflecting, encoding and
// resolving a schema was most of what opening a session cost, and most of what
// an open session kept.
var schemas sync.Map // reflect.Type → func() (*schema, error)

// sharedSchema returns what builds P's schema, once per process, on its first call.
func sharedSchema[P any]() func() (*schema, error) {
	t := reflect.TypeFor[P]()
	if f, ok := schemas.Load(t); ok {
		return f.(func() (*schema, error))
	}
	build := schemaFor[P]
	if raw := generatedSchema(schemaKey(t)); raw != "" {
		build = func() (*schema, error) { return generated(raw) }
	}
	f, _ := schemas.LoadOrStore(t, sync.OnceValues(build))
	return f.(func() (*schema, error))
}

// schemaKey names a parameter type in schemas_gen.go.
func schemaKey(t reflect.Type) string { return t.PkgPath() + "." + t.Name() }

// generated is a schema as go generate wrote it from the reflection below:
// a fresh process that opens a session reads these bytes instead of reflecting
// and encoding every tool's parameters to size the model's context.
func generated(raw string) (*schema, error) {
	b := []byte(raw)
	required := sync.OnceValue(func() []string {
		g, ok := simpleSchema(b)
		if !ok { // TestSchemasNeedNoReflection keeps this from happening
			panic("the generated schema is not one simpleSchema decodes; run go generate ./internal/tool")
		}
		return g.Required
	})
	return &schema{raw: b, required: required, resolved: sync.OnceValues(func() (*gjs.Resolved, error) { return resolve(b) })}, nil
}

// schemaFor reflects P's JSON schema: fields without omitempty are required,
// unknown properties are refused, and descriptions, enums and bounds come from
// `jsonschema` struct tags. The validator is chosen for a cheap start-up: dsh acp
// must answer initialize within milliseconds of spawning.
func schemaFor[P any]() (*schema, error) {
	reflections.Add(1)
	r := &jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true, Anonymous: true}
	var p P
	s := r.Reflect(p)
	s.Version = "" // models want a bare object schema
	raw, err := stdjson.Marshal(s)
	if err != nil {
		return nil, err
	}
	return &schema{raw: jsontext.Value(raw), required: func() []string { return s.Required }, resolved: sync.OnceValues(func() (*gjs.Resolved, error) { return resolve(raw) })}, nil
}

// complete reports whether args, an object that decoded into the parameters,
// has every required top-level member: the cheap part of validation, which
// tells a logged call that was refused for a missing field from one that ran.
func (s *schema) complete(args []byte) bool {
	required := s.required()
	if len(required) == 0 {
		return true
	}
	seen := 0
	fast := jsonfast.NewReader(args)
	if fast.Object(func(name []byte) bool {
		if slices.Contains(required, string(name)) {
			seen++ // the reader refuses duplicate names
		}
		return fast.Skip(0)
	}) && fast.End() {
		return seen == len(required)
	}
	d := jsontext.NewDecoder(bytes.NewReader(args))
	if t, err := d.ReadToken(); err != nil || t.Kind() != '{' {
		return false
	}
	seen = 0
	for d.PeekKind() == '"' {
		k, err := d.ReadToken()
		if err != nil {
			return false
		}
		if slices.Contains(required, k.String()) {
			seen++ // the decoder refuses duplicate names
		}
		if err := d.SkipValue(); err != nil {
			return false
		}
	}
	return seen == len(required)
}

// validate checks args against the schema, phrasing the problem for a model.
func (s *schema) validate(args []byte) error {
	s.mu.Lock()
	same := s.passed != nil && bytes.Equal(args, s.passed)
	s.mu.Unlock()
	if same {
		return nil
	}
	if err := s.check(args); err != nil {
		return err
	}
	if len(args) <= maxPassed {
		s.mu.Lock()
		s.passed = append(s.passed[:0:0], args...)
		s.mu.Unlock()
	}
	return nil
}

func (s *schema) check(args []byte) error {
	var inst any
	if err := stdjson.Unmarshal(args, &inst); err != nil {
		return fmt.Errorf("arguments are not valid JSON: %w", err)
	}
	resolved, err := s.resolved()
	if err != nil {
		return fmt.Errorf("the tool's schema: %w", err)
	}
	if err := resolved.Validate(inst); err != nil {
		return errors.New(phrase(err.Error()))
	}
	return nil
}

// phrase rewrites the validator's chain of schema locations ("validating root:
// validating /properties/todos: validating /properties/todos/items/properties/status:
// enum: …") into the field it is about: "at todos[].status: enum: …".
func phrase(msg string) string {
	const v = "validating "
	for {
		i := strings.Index(msg, v)
		if i < 0 {
			return msg
		}
		rest := msg[i+len(v):]
		j := strings.Index(rest, ": ")
		if j < 0 {
			return msg
		}
		loc, tail := rest[:j], rest[j+2:]
		if !strings.Contains(tail, v) {
			if loc == "root" {
				return tail
			}
			return "at " + field(loc) + ": " + tail
		}
		msg = tail
	}
}

// field turns a schema location such as /properties/todos/items/properties/status
// into todos[].status.
func field(loc string) string {
	var b strings.Builder
	segs := strings.Split(strings.TrimPrefix(loc, "/"), "/")
	for i := 0; i < len(segs); i++ {
		switch segs[i] {
		case "properties":
			if i+1 < len(segs) {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(segs[i+1])
				i++
			}
		case "items":
			b.WriteString("[]")
		}
	}
	return b.String()
}
