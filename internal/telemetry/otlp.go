package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// otlpHTTP sends spans as OTLP/HTTP requests with a protobuf body. It stands
// in for the SDK's otlptracehttp, whose collector package brings gRPC and,
// through it, html/template, which keeps every exported method in the binary
// (+24 MB; this, with the SDK, is +3 MB).
type otlpHTTP struct {
	url     string
	headers map[string]string
	gzip    bool
	client  *http.Client
}

func (x *otlpHTTP) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	body, err := encodeRequest(spans)
	if err != nil {
		return err
	}
	if x.gzip {
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		_, _ = w.Write(body) // a bytes.Buffer does not fail
		_ = w.Close()
		body = z.Bytes()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, x.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, v := range x.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if x.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := x.client.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the collector answered %s", resp.Status)
	}
	return nil
}

func (x *otlpHTTP) Shutdown(context.Context) error {
	x.client.CloseIdleConnections()
	return nil
}

// encodeRequest is an ExportTraceServiceRequest of spans: its one field,
// resource_spans (1), repeated. Written by hand, so the collector package
// (and gRPC with it) stays out of the binary. The spans come from one
// tracer of one provider: one resource, one scope.
func encodeRequest(spans []sdktrace.ReadOnlySpan) ([]byte, error) {
	first := spans[0]
	scope := first.InstrumentationScope()
	ss := &tracepb.ScopeSpans{Scope: &commonpb.InstrumentationScope{Name: scope.Name, Version: scope.Version}, SchemaUrl: scope.SchemaURL}
	for _, s := range spans {
		ss.Spans = append(ss.Spans, span(s))
	}
	rs := &tracepb.ResourceSpans{ScopeSpans: []*tracepb.ScopeSpans{ss}}
	if res := first.Resource(); res != nil {
		rs.Resource = &resourcepb.Resource{Attributes: keyValues(res.Attributes())}
		rs.SchemaUrl = res.SchemaURL()
	}
	b, err := proto.Marshal(rs)
	if err != nil {
		return nil, fmt.Errorf("encoding spans: %w", err)
	}
	out := protowire.AppendTag(nil, 1, protowire.BytesType)
	return protowire.AppendBytes(out, b), nil
}

func span(s sdktrace.ReadOnlySpan) *tracepb.Span {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	out := &tracepb.Span{
		TraceId:                tid[:],
		SpanId:                 sid[:],
		TraceState:             sc.TraceState().String(),
		Flags:                  uint32(sc.TraceFlags()),
		Name:                   s.Name(),
		Kind:                   tracepb.Span_SpanKind(s.SpanKind()), // the SDK's kinds are OTLP's numbers
		StartTimeUnixNano:      uint64(s.StartTime().UnixNano()),
		EndTimeUnixNano:        uint64(s.EndTime().UnixNano()),
		Attributes:             keyValues(s.Attributes()),
		DroppedAttributesCount: uint32(s.DroppedAttributes()),
		DroppedEventsCount:     uint32(s.DroppedEvents()),
		Status:                 status(s.Status()),
	}
	if p := s.Parent(); p.IsValid() {
		psid := p.SpanID()
		out.ParentSpanId = psid[:]
	}
	for _, e := range s.Events() {
		out.Events = append(out.Events, &tracepb.Span_Event{TimeUnixNano: uint64(e.Time.UnixNano()), Name: e.Name,
			Attributes: keyValues(e.Attributes), DroppedAttributesCount: uint32(e.DroppedAttributeCount)})
	}
	return out
}

func status(s sdktrace.Status) *tracepb.Status {
	switch s.Code {
	case codes.Error:
		return &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: s.Description}
	case codes.Ok:
		return &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK}
	case codes.Unset:
	}
	return nil
}

func keyValues(kvs []attribute.KeyValue) []*commonpb.KeyValue {
	out := make([]*commonpb.KeyValue, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, &commonpb.KeyValue{Key: string(kv.Key), Value: anyValue(kv.Value)})
	}
	return out
}

func anyValue(v attribute.Value) *commonpb.AnyValue {
	switch v.Type() {
	case attribute.BOOL:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}}
	case attribute.INT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}}
	case attribute.FLOAT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}}
	case attribute.STRING, attribute.EMPTY, attribute.BOOLSLICE, attribute.INT64SLICE, attribute.FLOAT64SLICE,
		attribute.STRINGSLICE, attribute.BYTESLICE, attribute.SLICE, attribute.MAP:
	}
	// Strings; dsh sets no other kind, which would go as its text.
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v.String()}}
}
