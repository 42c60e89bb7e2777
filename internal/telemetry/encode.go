package telemetry

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"strconv"

	"github.com/go-json-experiment/json"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The OTLP request, ExportTraceServiceRequest, is written here by hand in
// both of its encodings: the protobuf runtime and the generated types would
// add their weight and their package initialisers (one reads the binary) to
// every start of dsh, exporting or not. The tests decode what is written
// with the protocol's own generated types. The spans come from one tracer
// of one provider: one resource, one scope.

// Protobuf wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// pb appends protobuf fields; proto3 leaves fields at their zero value out.
type pb []byte

func (b pb) tag(field, wire int) pb { return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire)) }

func (b pb) bytes(field int, v []byte) pb {
	if len(v) == 0 {
		return b
	}
	b = b.tag(field, wireBytes)
	return append(binary.AppendUvarint(b, uint64(len(v))), v...)
}

func (b pb) str(field int, v string) pb { return b.bytes(field, []byte(v)) }

func (b pb) varint(field int, v uint64) pb {
	if v == 0 {
		return b
	}
	return binary.AppendUvarint(b.tag(field, wireVarint), v)
}

func (b pb) fixed64(field int, v uint64) pb {
	if v == 0 {
		return b
	}
	return binary.LittleEndian.AppendUint64(b.tag(field, wireFixed64), v)
}

func (b pb) fixed32(field int, v uint32) pb {
	if v == 0 {
		return b
	}
	return binary.LittleEndian.AppendUint32(b.tag(field, wireFixed32), v)
}

// protoRequest is the request in protobuf.
func protoRequest(spans []sdktrace.ReadOnlySpan) []byte {
	first := spans[0]
	scope := first.InstrumentationScope()
	var ss pb
	ss = ss.bytes(1, pb(nil).str(1, scope.Name).str(2, scope.Version))
	for _, s := range spans {
		ss = ss.bytes(2, protoSpan(s))
	}
	ss = ss.str(3, scope.SchemaURL)
	var rs pb
	if res := first.Resource(); res != nil {
		rs = rs.bytes(1, protoAttrs(nil, 1, res.Attributes()))
	}
	rs = rs.bytes(2, ss)
	if res := first.Resource(); res != nil {
		rs = rs.str(3, res.SchemaURL())
	}
	return pb(nil).bytes(1, rs)
}

func protoSpan(s sdktrace.ReadOnlySpan) pb {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	var b pb
	b = b.bytes(1, tid[:]).bytes(2, sid[:]).str(3, sc.TraceState().String())
	if p := s.Parent(); p.IsValid() {
		psid := p.SpanID()
		b = b.bytes(4, psid[:])
	}
	// The SDK's span kinds are OTLP's numbers.
	b = b.str(5, s.Name()).varint(6, uint64(s.SpanKind()))
	b = b.fixed64(7, uint64(s.StartTime().UnixNano())).fixed64(8, uint64(s.EndTime().UnixNano()))
	b = protoAttrs(b, 9, s.Attributes()).varint(10, uint64(s.DroppedAttributes()))
	for _, e := range s.Events() {
		ev := pb(nil).fixed64(1, uint64(e.Time.UnixNano())).str(2, e.Name)
		b = b.bytes(11, protoAttrs(ev, 3, e.Attributes).varint(4, uint64(e.DroppedAttributeCount)))
	}
	b = b.varint(12, uint64(s.DroppedEvents()))
	if code, msg := statusOf(s.Status()); code != 0 {
		b = b.bytes(15, pb(nil).str(2, msg).varint(3, code))
	}
	return b.fixed32(16, uint32(sc.TraceFlags()))
}

// protoAttrs appends attrs as KeyValue messages in field.
func protoAttrs(b pb, field int, attrs []attribute.KeyValue) pb {
	for _, kv := range attrs {
		// AnyValue's value is a oneof: a zero value is still written.
		var v pb
		switch kv.Value.Type() {
		case attribute.BOOL:
			var n uint64
			if kv.Value.AsBool() {
				n = 1
			}
			v = binary.AppendUvarint(v.tag(2, wireVarint), n)
		case attribute.INT64:
			v = binary.AppendUvarint(v.tag(3, wireVarint), uint64(kv.Value.AsInt64()))
		case attribute.FLOAT64:
			v = binary.LittleEndian.AppendUint64(v.tag(4, wireFixed64), math.Float64bits(kv.Value.AsFloat64()))
		case attribute.STRING, attribute.EMPTY, attribute.BOOLSLICE, attribute.INT64SLICE, attribute.FLOAT64SLICE,
			attribute.STRINGSLICE, attribute.BYTESLICE, attribute.SLICE, attribute.MAP:
			// Strings; dsh sets no other kind, which would go as its text.
			s := kv.Value.String()
			v = append(binary.AppendUvarint(v.tag(1, wireBytes), uint64(len(s))), s...)
		}
		b = b.bytes(field, pb(nil).str(1, string(kv.Key)).bytes(2, v))
	}
	return b
}

// statusOf is a span status as OTLP codes it.
func statusOf(s sdktrace.Status) (code uint64, msg string) {
	switch s.Code {
	case codes.Error:
		return 2, s.Description
	case codes.Ok:
		return 1, ""
	case codes.Unset:
	}
	return 0, ""
}

// OTLP/JSON: the protobuf JSON mapping with lowerCamelCase names, ids in hex,
// enums as numbers and 64-bit integers as strings.
type (
	jsonRequestBody struct {
		ResourceSpans []jsonResourceSpans `json:"resourceSpans"`
	}
	jsonResourceSpans struct {
		Resource   jsonResource     `json:"resource"`
		ScopeSpans []jsonScopeSpans `json:"scopeSpans"`
		SchemaURL  string           `json:"schemaUrl,omitempty"`
	}
	jsonResource struct {
		Attributes []jsonKeyValue `json:"attributes"`
	}
	jsonScopeSpans struct {
		Scope     jsonScope  `json:"scope"`
		Spans     []jsonSpan `json:"spans"`
		SchemaURL string     `json:"schemaUrl,omitempty"`
	}
	jsonScope struct {
		Name    string `json:"name"`
		Version string `json:"version,omitempty"`
	}
	jsonSpan struct {
		TraceID                string         `json:"traceId"`
		SpanID                 string         `json:"spanId"`
		TraceState             string         `json:"traceState,omitempty"`
		ParentSpanID           string         `json:"parentSpanId,omitempty"`
		Flags                  uint32         `json:"flags,omitzero"`
		Name                   string         `json:"name"`
		Kind                   int            `json:"kind"`
		StartTimeUnixNano      string         `json:"startTimeUnixNano"`
		EndTimeUnixNano        string         `json:"endTimeUnixNano"`
		Attributes             []jsonKeyValue `json:"attributes,omitempty"`
		DroppedAttributesCount int            `json:"droppedAttributesCount,omitzero"`
		Events                 []jsonEvent    `json:"events,omitempty"`
		DroppedEventsCount     int            `json:"droppedEventsCount,omitzero"`
		Status                 *jsonStatus    `json:"status,omitempty"`
	}
	jsonEvent struct {
		TimeUnixNano           string         `json:"timeUnixNano"`
		Name                   string         `json:"name"`
		Attributes             []jsonKeyValue `json:"attributes,omitempty"`
		DroppedAttributesCount int            `json:"droppedAttributesCount,omitzero"`
	}
	jsonStatus struct {
		Message string `json:"message,omitempty"`
		Code    uint64 `json:"code"`
	}
	jsonKeyValue struct {
		Key   string    `json:"key"`
		Value jsonValue `json:"value"`
	}
	jsonValue struct {
		StringValue *string  `json:"stringValue,omitempty"`
		BoolValue   *bool    `json:"boolValue,omitempty"`
		IntValue    *string  `json:"intValue,omitempty"`
		DoubleValue *float64 `json:"doubleValue,omitempty"`
	}
)

// jsonRequest is the request in JSON.
func jsonRequest(spans []sdktrace.ReadOnlySpan) ([]byte, error) {
	first := spans[0]
	scope := first.InstrumentationScope()
	ss := jsonScopeSpans{Scope: jsonScope{Name: scope.Name, Version: scope.Version}, SchemaURL: scope.SchemaURL}
	for _, s := range spans {
		ss.Spans = append(ss.Spans, jsonSpanOf(s))
	}
	rs := jsonResourceSpans{ScopeSpans: []jsonScopeSpans{ss}}
	if res := first.Resource(); res != nil {
		rs.Resource.Attributes, rs.SchemaURL = jsonAttrs(res.Attributes()), res.SchemaURL()
	}
	return json.Marshal(jsonRequestBody{ResourceSpans: []jsonResourceSpans{rs}})
}

func jsonSpanOf(s sdktrace.ReadOnlySpan) jsonSpan {
	sc := s.SpanContext()
	out := jsonSpan{TraceID: sc.TraceID().String(), SpanID: sc.SpanID().String(), TraceState: sc.TraceState().String(), Flags: uint32(sc.TraceFlags()),
		Name: s.Name(), Kind: int(s.SpanKind()), StartTimeUnixNano: nanos(s.StartTime().UnixNano()), EndTimeUnixNano: nanos(s.EndTime().UnixNano()),
		Attributes: jsonAttrs(s.Attributes()), DroppedAttributesCount: s.DroppedAttributes(), DroppedEventsCount: s.DroppedEvents()}
	if p := s.Parent(); p.IsValid() {
		psid := p.SpanID()
		out.ParentSpanID = hex.EncodeToString(psid[:])
	}
	for _, e := range s.Events() {
		out.Events = append(out.Events, jsonEvent{TimeUnixNano: nanos(e.Time.UnixNano()), Name: e.Name, Attributes: jsonAttrs(e.Attributes),
			DroppedAttributesCount: e.DroppedAttributeCount})
	}
	if code, msg := statusOf(s.Status()); code != 0 {
		out.Status = &jsonStatus{Code: code, Message: msg}
	}
	return out
}

func nanos(n int64) string { return strconv.FormatInt(n, 10) }

func jsonAttrs(attrs []attribute.KeyValue) []jsonKeyValue {
	out := make([]jsonKeyValue, 0, len(attrs))
	for _, kv := range attrs {
		var v jsonValue
		switch kv.Value.Type() {
		case attribute.BOOL:
			b := kv.Value.AsBool()
			v.BoolValue = &b
		case attribute.INT64:
			n := nanos(kv.Value.AsInt64())
			v.IntValue = &n
		case attribute.FLOAT64:
			f := kv.Value.AsFloat64()
			v.DoubleValue = &f
		case attribute.STRING, attribute.EMPTY, attribute.BOOLSLICE, attribute.INT64SLICE, attribute.FLOAT64SLICE,
			attribute.STRINGSLICE, attribute.BYTESLICE, attribute.SLICE, attribute.MAP:
			s := kv.Value.String()
			v.StringValue = &s
		}
		out = append(out, jsonKeyValue{Key: string(kv.Key), Value: v})
	}
	return out
}
