package tool_test

import (
	stdjson "encoding/json"
	"reflect"
	"testing"

	gjs "github.com/google/jsonschema-go/jsonschema"

	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/toolset"
)

// Every built-in tool's schema is decoded without encoding/json's reflection
// of the validator's schema type, into what that would give; other schemas
// (an MCP server's) are left to it.
func TestSimpleSchemaDecodesAsEncodingJSON(t *testing.T) {
	schemas := map[string]string{
		"additional true":   `{"type":"object","additionalProperties":true}`,
		"additional schema": `{"type":"object","additionalProperties":{"type":"string"}}`,
		"empty":             `{"properties":{},"required":[],"enum":[]}`,
	}
	for _, tl := range toolset.New(toolset.Options{Skills: true}).Tools() {
		schemas[tl.Name()] = string(tl.Schema())
	}
	for name, raw := range schemas {
		got, ok := tool.SimpleSchema([]byte(raw))
		if !ok {
			t.Errorf("%s: %s is not decoded the quick way; teach simpleSchema its keyword", name, raw)
			continue
		}
		var want gjs.Schema
		if err := stdjson.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, &want) {
			t.Errorf("%s: decoded %+v, encoding/json %+v", name, got, &want)
		}
	}
	for _, raw := range []string{
		`{"type":["string","null"]}`, `{"oneOf":[{"type":"string"}]}`, `{"minLength":1.0}`, `{"enum":[1,2]}`,
		`{"maxItems":4294967296}`, `{"type":"object"} {}`, `{"type":"object"`,
	} {
		if _, ok := tool.SimpleSchema([]byte(raw)); ok {
			t.Errorf("%s was decoded the quick way, want it left to encoding/json", raw)
		}
	}
}
