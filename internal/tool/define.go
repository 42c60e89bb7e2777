package tool

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/jsonfast"
)

// New erases P and M from a Spec. P's schema is built on first need (the
// model's tool list, a call to check), once per parameter type and process: a
// process that runs one call (dsh tool) reflects one schema, not every tool's.
// That first need panics if the schema cannot be generated, a programming error
// caught by any test that checks a call of every tool (toolset's).
func New[P, M any](s Spec[P, M]) Tool {
	return &typed[P, M]{spec: s, sch: sharedSchema[P]()}
}

type typed[P, M any] struct {
	spec Spec[P, M]
	sch  func() (*schema, error)

	// meta holds the meta decoded last: a logged result is folded and presented
	// from the same bytes (a reload presents a few records behind its fold, a
	// live consumer a little after the agent), and a read window's meta is worth
	// decoding once.
	meta memo[*M]
	// args is meta's like for a logged call's arguments, decoded for its
	// fold, its call card and its result card from the same bytes.
	args memo[P]
}

// schema is P's schema, built on the first call.
func (t *typed[P, M]) schema() *schema {
	s, err := t.sch()
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", t.spec.Name, err))
	}
	return s
}

// decodedMeta decodes raw with DecodeMeta, once for the same bytes. Callers
// must not change what it returns.
func (t *typed[P, M]) decodedMeta(raw jsontext.Value) *M {
	if len(raw) == 0 {
		return nil
	}
	if m, ok := t.meta.get(raw); ok {
		return m
	}
	m := DecodeMeta[M](raw)
	t.meta.put(raw, m)
	return m
}

// logged decodes a logged call's arguments as decode(args, false) does, once
// for the same bytes. Callers must not change what it returns.
func (t *typed[P, M]) logged(args []byte) (P, error) {
	if len(args) == 0 {
		return t.decode(args, false)
	}
	if p, ok := t.args.get(args); ok {
		return p, nil
	}
	p, err := t.decode(args, false)
	if err != nil {
		return p, err
	}
	t.args.put(args, p)
	return p, nil
}

// readMeta decodes the meta at d's position as DecodeMeta would, in the same
// pass that finds its end, into the memo, and returns its bytes (a copy); ok
// is false, d back where it was, for meta that is not in the plainest form
// (DecodeMeta decodes it later, when it is asked for).
func (t *typed[P, M]) readMeta(d *jsonfast.Reader) (raw jsontext.Value, ok bool) {
	start := d.Offset()
	m := new(M)
	if f, fast := any(m).(FastDecoder); fast {
		ok = f.DecodeFast(d)
	} else {
		ok = jsonfast.DecodeValue(d, m)
	}
	if !ok {
		d.Seek(start)
		return nil, false
	}
	raw = append(jsontext.Value(nil), d.Since(start)...)
	if v, check := any(m).(Validator); check && v.Validate() != nil {
		m = nil
	}
	t.meta.put(raw, m)
	return raw, true
}

// reflectSchema reflects P's schema afresh, and names P as schemas_gen.go does.
func (t *typed[P, M]) reflectSchema() (string, *schema, error) {
	s, err := schemaFor[P]()
	return schemaKey(reflect.TypeFor[P]()), s, err
}

func (t *typed[P, M]) Name() string           { return t.spec.Name }
func (t *typed[P, M]) Description() string    { return t.spec.Description }
func (t *typed[P, M]) Guidance() string       { return t.spec.Guidance }
func (t *typed[P, M]) Schema() jsontext.Value { return t.schema().raw }
func (t *typed[P, M]) ReadOnly() bool         { return t.spec.ReadOnly }
func (t *typed[P, M]) Permission() Permission { return t.spec.Permission }

// ReadOnlyCall says whether one call only reads: Spec.ReadOnlyCall's answer,
// else the tool's. Arguments that do not decode run alone.
func (t *typed[P, M]) ReadOnlyCall(args []byte) bool {
	if t.spec.ReadOnlyCall == nil {
		return t.spec.ReadOnly
	}
	p, err := t.decode(args, false)
	return err == nil && t.spec.ReadOnlyCall(p)
}
func (t *typed[P, M]) Kind() card.ToolKind { return t.spec.Kind }

// decode decodes args strictly into P. With validate it first checks them
// against the schema, so the model hears which field is missing or mistyped.
// The presenters and Fold skip it: they get logged calls, whose arguments were
// checked before they ran (a call the schema refused has an error result, which
// no result presenter renders), and the work would be repeated for every call of
// every replay. A call card still needs arguments that decode into P and have
// every required member; others get a generic card.
func (t *typed[P, M]) decode(args []byte, validate bool) (P, error) {
	var p P
	if len(strings.TrimSpace(string(args))) == 0 {
		args = []byte("{}")
	}
	if validate {
		if err := t.schema().validate(args); err != nil {
			return p, err
		}
	}
	if decodeFast(args, &p) {
		return p, nil
	}
	p = *new(P)
	if err := json.Unmarshal(args, &p, json.RejectUnknownMembers(true)); err != nil {
		return p, err
	}
	return p, nil
}

func (t *typed[P, M]) Approval(args []byte) Approval {
	p, err := t.decode(args, true)
	if err != nil {
		return Approval{}
	}
	if t.spec.Approval == nil {
		return Approval{Keys: []string{"tool:" + t.spec.Name}, Label: t.spec.Name, Remember: true}
	}
	return t.spec.Approval(p)
}

func (t *typed[P, M]) Preview(ctx context.Context, env Env, args []byte) (jsontext.Value, *Result) {
	if t.spec.Preview == nil {
		return nil, nil
	}
	p, err := t.decode(args, true)
	if err != nil {
		return nil, nil // Run explains the arguments
	}
	m, err := t.spec.Preview(ctx, env, p)
	if err != nil {
		r := Errorf("%s", err.Error())
		return nil, &r
	}
	raw, err := EncodeMeta(m)
	if err != nil {
		r := Errorf("%s: cannot record the preview: %v", t.spec.Name, err)
		return nil, &r
	}
	return raw, nil
}

func (t *typed[P, M]) Run(ctx context.Context, env Env, args []byte, preview jsontext.Value) (Result, error) {
	p, err := t.decode(args, true)
	if err != nil {
		return Errorf("Invalid arguments for %s: %v", t.spec.Name, err), nil
	}
	var pv *M
	if t.spec.Preview != nil {
		if pv = DecodeMeta[M](preview); pv == nil {
			return Errorf("%s: the call has no valid preview, so it was not run.", t.spec.Name), nil
		}
	}
	r, m, err := t.spec.Execute(ctx, env, p, pv)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", t.spec.Name, err)
	}
	if m != nil {
		raw, err := EncodeMeta(m)
		if err != nil {
			return Result{}, fmt.Errorf("%s: encode meta: %w", t.spec.Name, err)
		}
		r.Meta = raw
	}
	return r, nil
}

func (t *typed[P, M]) PresentCall(args []byte, preview jsontext.Value) card.Call {
	p, err := t.logged(args)
	if err != nil || !t.schema().complete(args) {
		return &card.GenericCall{Title: t.spec.Name, ToolKind: t.spec.Kind, RawInput: rawOrNil(args)}
	}
	c := t.spec.PresentCall(p, DecodeMeta[M](preview))
	if g, ok := c.(*card.GenericCall); ok {
		g.ToolKind = t.spec.Kind
	}
	return c
}

func (t *typed[P, M]) PresentResult(args []byte, r Result) card.Result {
	p, err := t.logged(args)
	if err != nil || t.spec.PresentResult == nil {
		return nil
	}
	return t.spec.PresentResult(p, r, t.decodedMeta(r.Meta))
}

func (t *typed[P, M]) Fold(s *Session, args []byte, r Result) {
	if t.spec.Fold == nil {
		// Decoded all the same, into the memo: every consumer presents the
		// result next, and a reload then decodes it on the fold's goroutine,
		// beside the replay's, rather than on the replay's.
		t.decodedMeta(r.Meta)
		return
	}
	p, err := t.logged(args)
	if err != nil {
		return
	}
	t.spec.Fold(s, p, r, t.decodedMeta(r.Meta))
}

func (t *typed[P, M]) Touched(args []byte, r Result) []string {
	if t.spec.Touched == nil {
		return nil
	}
	p, err := t.decode(args, false)
	if err != nil {
		return nil
	}
	return t.spec.Touched(p, r, t.decodedMeta(r.Meta))
}

// EncodeMeta is how the framework writes meta: deterministic JSON.
func EncodeMeta[M any](m *M) (jsontext.Value, error) {
	if m == nil {
		return nil, nil
	}
	return json.Marshal(m, json.Deterministic(true))
}

// DecodeMeta narrows persisted meta: strict JSON (no unknown, duplicate or
// mistyped members) into M, then M's own Validate. Anything else — missing,
// damaged or written by another version — gives nil, never an error: replaying
// an old or damaged log must not fail.
func DecodeMeta[M any](raw jsontext.Value) *M {
	if len(raw) == 0 {
		return nil
	}
	m := new(M)
	if !decodeFast(raw, m) {
		*m = *new(M)
		if err := json.Unmarshal(raw, m, json.RejectUnknownMembers(true)); err != nil {
			return nil
		}
	}
	if v, ok := any(m).(Validator); ok && v.Validate() != nil {
		return nil
	}
	return m
}

// FastDecoder is meta whose UnmarshalJSON is stricter than plain JSON
// decoding: DecodeFast decodes the plainest input to what UnmarshalJSON makes
// of it, without reflection (jsonfast.Decode into a copy of the type without
// the method), and reports false for the rest, which UnmarshalJSON decides.
//
// It decodes the one value at d's position and moves past it.
type FastDecoder interface{ DecodeFast(d *jsonfast.Reader) bool }

// decodeFast decodes b into a fresh *v as json.Unmarshal would, if b is plain
// enough to do it without reflection: every reload decodes every logged call's
// arguments and meta, which was most of what it cost.
func decodeFast(b []byte, v any) bool {
	if f, ok := v.(FastDecoder); ok {
		d := jsonfast.NewReader(b)
		return f.DecodeFast(d) && d.End()
	}
	return jsonfast.Decode(b, v)
}

// rawOrNil returns args as a raw JSON value if they are valid JSON.
func rawOrNil(args []byte) card.RawJSON {
	v := jsontext.Value(args)
	if !v.IsValid() {
		return nil
	}
	return v.Clone()
}

// HookCall is the call as hooks see it (Spec.Hook); ok is false when the tool
// has no mapping or the arguments do not decode.
func (t *typed[P, M]) HookCall(args []byte, cwd string) (name string, input jsontext.Value, ok bool) {
	if t.spec.Hook == nil {
		return "", nil, false
	}
	p, err := t.decode(args, false)
	if err != nil {
		return "", nil, false
	}
	name, v := t.spec.Hook(p, cwd)
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		return "", nil, false
	}
	return name, b, true
}

// HookArgs is the call a hook's updatedInput asks for (Spec.Unhook).
func (t *typed[P, M]) HookArgs(args []byte, input jsontext.Value, cwd string) ([]byte, bool, error) {
	if t.spec.Unhook == nil {
		return nil, false, nil
	}
	p, err := t.decode(args, false)
	if err != nil {
		return nil, false, nil
	}
	q, err := t.spec.Unhook(p, input, cwd)
	if err != nil {
		return nil, true, err
	}
	// Zero members are left out, as a model leaves them out (a timeout of 0
	// is below the schema's minimum), unless the schema requires them.
	b, err := json.Marshal(q, json.Deterministic(true), json.OmitZeroStructFields(true))
	if err == nil && !t.schema().complete(b) {
		b, err = json.Marshal(q, json.Deterministic(true))
	}
	return b, true, err
}

// HookResponse is a result as hooks see it (Spec.HookResponse).
func (t *typed[P, M]) HookResponse(args []byte, r Result, cwd string) (jsontext.Value, bool) {
	if t.spec.HookResponse == nil {
		return nil, false
	}
	p, err := t.decode(args, false)
	if err != nil {
		return nil, false
	}
	b, err := json.Marshal(t.spec.HookResponse(p, r, t.decodedMeta(r.Meta), cwd), json.Deterministic(true))
	if err != nil {
		return nil, false
	}
	return b, true
}

// RelPath is a hook's absolute path as a call's argument: orig, the call's
// own, when it names the same file or the hook left it out, else abs.
func RelPath(cwd, orig, abs string) string {
	if abs == "" || AbsPath(cwd, orig) == abs {
		return orig
	}
	return abs
}

// AbsPath is p made absolute against cwd, for a Spec.Hook's tool_input.
func AbsPath(cwd, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(cwd, p)
}
