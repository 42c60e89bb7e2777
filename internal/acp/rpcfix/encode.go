package rpcfix

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// The SDK encodes every union (a session update, a tool call's content, a
// content block) by marshalling the variant, decoding that into a map, adding
// the discriminator and marshalling the map again — three passes at every level
// of nesting, which made replaying a long session in session/load take seconds.
// Notifications are the bulk of what dsh sends, so it encodes them itself, in
// one pass, to the same JSON (the conformance tests validate every message
// against the SDK's schema). Everything else still goes through the SDK.

// wireOpts are encoding/json's semantics (the SDK's structs are tagged for it)
// with the unions marshalled in one pass.
func wireOpts() json.Options {
	wire.once.Do(func() {
		wire.opts = json.JoinOptions(jsonv1.DefaultOptionsV1(), json.Deterministic(true),
			jsontext.AllowInvalidUTF8(true), json.WithMarshalers(json.MarshalToFunc(marshalUnion)))
	})
	return wire.opts
}

var wire struct {
	once sync.Once
	opts json.Options
}

// EncodeNotification is the JSON-RPC line of a session/update notification.
func EncodeNotification(note sdk.SessionNotification) ([]byte, error) {
	var b bytes.Buffer
	if err := appendNotification(&b, note); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// appendNotification appends the line of a notification to b. Into a buffer
// grown by the ones before, a large update (a command's whole output) is
// encoded in place, without copies of it as the buffer grows.
func appendNotification(b *bytes.Buffer, note sdk.SessionNotification) error {
	b.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":`)
	if out, ok := appendFast(b.AvailableBuffer(), note); ok {
		b.Write(out) // in place when the buffer had room: no copy
		b.WriteString("}\n")
		return nil
	}
	return appendGeneral(b, note)
}

// appendGeneral appends a notification's params the general way, and the end
// of its line.
func appendGeneral(b *bytes.Buffer, note sdk.SessionNotification) error {
	if err := json.MarshalWrite(b, note, wireOpts()); err != nil {
		return fmt.Errorf("encode session/update: %w", err)
	}
	b.WriteString("}\n")
	return nil
}

// textSize is about how many bytes of text and data an update carries: what
// dominates its encoding when it is large.
func textSize(u sdk.SessionUpdate) int {
	n := 0
	block := func(b sdk.ContentBlock) {
		switch {
		case b.Text != nil:
			n += len(b.Text.Text)
		case b.Image != nil:
			n += len(b.Image.Data)
		}
	}
	contents := func(cs []sdk.ToolCallContent) {
		for _, c := range cs {
			switch {
			case c.Content != nil:
				block(c.Content.Content)
			case c.Diff != nil:
				n += len(c.Diff.NewText)
				if c.Diff.OldText != nil {
					n += len(*c.Diff.OldText)
				}
			}
		}
	}
	meta := func(m map[string]any) { // a terminal's output rides in its _meta
		if out, ok := m["terminal_output"].(map[string]any); ok {
			s, _ := out["data"].(string)
			n += len(s)
		}
	}
	switch {
	case u.ToolCall != nil:
		contents(u.ToolCall.Content)
		meta(u.ToolCall.Meta)
	case u.ToolCallUpdate != nil:
		contents(u.ToolCallUpdate.Content)
		meta(u.ToolCallUpdate.Meta)
	case u.AgentMessageChunk != nil:
		block(u.AgentMessageChunk.Content)
	case u.UserMessageChunk != nil:
		block(u.UserMessageChunk.Content)
	case u.AgentThoughtChunk != nil:
		block(u.AgentThoughtChunk.Content)
	}
	return n
}

// marshalUnion marshals an SDK union — a struct whose fields are all pointers
// tagged "-", one of them set — as its variant with the discriminator filled
// in. Anything else is left to its own MarshalJSON.
func marshalUnion(enc *jsontext.Encoder, v stdjson.Marshaler) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		rv = rv.Elem()
	}
	u, ok := unionOf(rv.Type())
	if !ok {
		return errors.ErrUnsupported
	}
	for i, f := range u.variants {
		fv := rv.Field(i)
		if f.tagField < 0 || fv.IsNil() {
			continue
		}
		variant := reflect.New(fv.Elem().Type()).Elem()
		variant.Set(fv.Elem())
		variant.Field(f.tagField).SetString(f.tag)
		return json.MarshalEncode(enc, variant.Interface(), wireOpts())
	}
	return errors.ErrUnsupported // no variant set, or one this table does not know: the SDK's own encoding
}

// union is what marshalUnion knows of a union type: for each field, the index of
// its variant's discriminator field and the discriminator's value.
type union struct{ variants []variant }

type variant struct {
	tagField int // -1: unknown, leave it to the SDK
	tag      string
}

var unions sync.Map // reflect.Type → union, or false

// unionOf learns a union type once, from the SDK's own encoding of each variant.
func unionOf(t reflect.Type) (union, bool) {
	if v, ok := unions.Load(t); ok {
		u, isUnion := v.(union)
		return u, isUnion
	}
	u, ok := learnUnion(t)
	if ok {
		unions.Store(t, u)
	} else {
		unions.Store(t, false)
	}
	return u, ok
}

func learnUnion(t reflect.Type) (union, bool) {
	if t.Kind() != reflect.Struct || !looksLikeUnion(t) {
		return union{}, false
	}
	var u union
	for i := range t.NumField() {
		u.variants = append(u.variants, learnVariant(t, i))
	}
	return u, true
}

// learnVariant asks the SDK to encode a zero value of variant i and finds the
// discriminator it adds among the variant's own fields.
func learnVariant(t reflect.Type, i int) variant {
	no := variant{tagField: -1}
	uv := reflect.New(t).Elem()
	vp := reflect.New(t.Field(i).Type.Elem())
	fillUnions(vp.Elem(), 3)
	uv.Field(i).Set(vp)
	m, ok := uv.Interface().(stdjson.Marshaler)
	if !ok {
		return no
	}
	b, err := m.MarshalJSON()
	if err != nil {
		return no
	}
	var obj map[string]any
	if stdjson.Unmarshal(b, &obj) != nil {
		return no
	}
	vt := t.Field(i).Type.Elem()
	for j := range vt.NumField() {
		name, _, _ := cutComma(vt.Field(j).Tag.Get("json"))
		if s, isStr := obj[name].(string); isStr && s != "" && vt.Field(j).Type.Kind() == reflect.String {
			return variant{tagField: j, tag: s}
		}
	}
	return no
}

// fillUnions sets a variant in every union field of a zero struct, so that the
// SDK can encode it (an empty union is an error to it).
func fillUnions(v reflect.Value, depth int) {
	if depth == 0 || v.Kind() != reflect.Struct {
		return
	}
	for j := range v.NumField() {
		f := v.Field(j)
		if !f.CanSet() || f.Kind() != reflect.Struct || !looksLikeUnion(f.Type()) {
			continue
		}
		p := reflect.New(f.Type().Field(0).Type.Elem())
		fillUnions(p.Elem(), depth-1)
		f.Field(0).Set(p)
	}
}

func looksLikeUnion(t reflect.Type) bool {
	if t.NumField() == 0 {
		return false
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Tag.Get("json") != "-" || f.Type.Kind() != reflect.Pointer || f.Type.Elem().Kind() != reflect.Struct {
			return false
		}
	}
	return true
}

func cutComma(s string) (string, string, bool) {
	for i := range len(s) {
		if s[i] == ',' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
