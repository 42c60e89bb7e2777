// Package otlptest is an OTLP/HTTP trace receiver on loopback for tests: it
// decodes each export request with the OpenTelemetry protocol's own types,
// as a collector would, and keeps the spans.
package otlptest

import (
	"compress/gzip"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Span is a received span, flattened.
type Span struct {
	Name           string
	TraceID        string
	SpanID, Parent string // hex; Parent "" for a root
	Start, End     time.Time
	Attrs          map[string]any // string, int64, float64 or bool
	Events         []string
	Error          string // the status description when the status is an error
	Failed         bool
	Resource       map[string]any
}

// Receiver is the receiver. Each request is answered only once Hold's
// channel, if any, is closed: a collector that does not answer.
type Receiver struct {
	URL string // the traces endpoint: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
	// Base is the server's root: OTEL_EXPORTER_OTLP_ENDPOINT.
	Base string

	mu       sync.Mutex
	spans    []Span
	requests int
	headers  []http.Header
	errs     []error
	hold     chan struct{}
	release  func()
}

// New starts a receiver for the test's life.
func New(t testing.TB) *Receiver {
	r := &Receiver{}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(func() {
		r.mu.Lock()
		release := r.release
		r.mu.Unlock()
		if release != nil {
			release()
		}
		srv.Close()
	})
	r.Base, r.URL = srv.URL, srv.URL+"/v1/traces"
	return r
}

// Hold makes the receiver take requests and answer none until release is
// called.
func (r *Receiver) Hold() (release func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hold = make(chan struct{})
	h := r.hold
	var once sync.Once
	r.release = func() { once.Do(func() { close(h) }) }
	return r.release
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	hold := r.hold
	r.mu.Unlock()
	spans, err := decode(req)
	r.mu.Lock()
	r.requests++
	r.headers = append(r.headers, req.Header.Clone())
	if err != nil {
		r.errs = append(r.errs, err)
	}
	r.spans = append(r.spans, spans...)
	r.mu.Unlock()
	if hold != nil {
		<-hold
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	b, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

func decode(req *http.Request) ([]Span, error) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		return nil, fmt.Errorf("%s %s: want POST /v1/traces", req.Method, req.URL.Path)
	}
	ct := req.Header.Get("Content-Type")
	if ct != "application/x-protobuf" && ct != "application/json" {
		return nil, fmt.Errorf("content type %q: want application/x-protobuf or application/json", ct)
	}
	body := io.Reader(req.Body)
	if req.Header.Get("Content-Encoding") == "gzip" {
		z, err := gzip.NewReader(req.Body)
		if err != nil {
			return nil, err
		}
		body = z
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	var msg coltracepb.ExportTraceServiceRequest
	if ct == "application/json" {
		if b, err = otlpJSON(b); err == nil {
			err = protojson.Unmarshal(b, &msg)
		}
	} else {
		err = proto.Unmarshal(b, &msg)
	}
	if err != nil {
		return nil, fmt.Errorf("decoding the request: %w", err)
	}
	var out []Span
	for _, rs := range msg.GetResourceSpans() {
		res := attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := Span{Name: s.GetName(), TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					Parent: hex.EncodeToString(s.GetParentSpanId()), Start: time.Unix(0, int64(s.GetStartTimeUnixNano())),
					End: time.Unix(0, int64(s.GetEndTimeUnixNano())), Attrs: attrs(s.GetAttributes()), Resource: res}
				for _, e := range s.GetEvents() {
					sp.Events = append(sp.Events, e.GetName())
				}
				if s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR {
					sp.Failed, sp.Error = true, s.GetStatus().GetMessage()
				}
				out = append(out, sp)
			}
		}
	}
	return out, nil
}

// otlpJSON turns OTLP/JSON into the protobuf JSON mapping protojson reads:
// OTLP writes the ids in hex where the mapping has base64.
func otlpJSON(b []byte) ([]byte, error) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	var walk func(v any) error
	walk = func(v any) error {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && (k == "traceId" || k == "spanId" || k == "parentSpanId") {
					id, err := hex.DecodeString(s)
					if err != nil {
						return fmt.Errorf("%s %q is not hex: %w", k, s, err)
					}
					v[k] = base64.StdEncoding.EncodeToString(id)
					continue
				}
				if err := walk(x); err != nil {
					return err
				}
			}
		case []any:
			for _, x := range v {
				if err := walk(x); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func attrs(kvs []*commonpb.KeyValue) map[string]any {
	m := map[string]any{}
	for _, kv := range kvs {
		switch v := kv.GetValue().GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.GetKey()] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.GetKey()] = v.IntValue
		case *commonpb.AnyValue_DoubleValue:
			m[kv.GetKey()] = v.DoubleValue
		case *commonpb.AnyValue_BoolValue:
			m[kv.GetKey()] = v.BoolValue
		default:
			m[kv.GetKey()] = fmt.Sprintf("%T", v)
		}
	}
	return m
}

// Spans are the spans received so far, in order.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Requests is how many export requests came.
func (r *Receiver) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// Headers are the headers of each request.
func (r *Receiver) Headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}

// Errors are the requests that did not decode.
func (r *Receiver) Errors() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}
