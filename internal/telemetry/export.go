package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/go-logr/logr/funcr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Exporter sends one session's spans to a collector, in batches, in the
// background: a collector that is slow or down holds up nothing but its
// own goroutine, and Close waits for it only so long.
type Exporter struct {
	tp       *sdktrace.TracerProvider
	tracer   trace.Tracer
	content  bool
	endpoint string
	warn     func(string)
}

// Start starts exporting as c says; version is dsh's (service.version).
// warn is told, once, when spans could not be sent.
func Start(c Config, version string, warn func(string)) (*Exporter, error) {
	if c.Exporter != "" && c.Exporter != "otlp" {
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: dsh exports traces over OTLP only (otlp or none)", c.Exporter)
	}
	switch c.Protocol {
	case ProtocolHTTPProtobuf, ProtocolHTTPJSON:
	case "grpc":
		return nil, errors.New("OTEL_EXPORTER_OTLP_PROTOCOL=grpc: dsh sends OTLP over HTTP only; set http/protobuf and the collector's HTTP endpoint (port 4318)")
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: want http/protobuf or http/json", c.Protocol)
	}
	if u, err := url.Parse(c.Endpoint); err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("the endpoint %q is not an http or https URL", c.Endpoint)
	}
	quiet(warn)
	exp := &otlpHTTP{url: c.Endpoint, headers: c.Headers, json: c.Protocol == ProtocolHTTPJSON, gzip: c.Gzip, warn: warn,
		client: &http.Client{Timeout: c.Timeout, Transport: http.DefaultTransport.(*http.Transport).Clone()}}
	res := resource.NewSchemaless(attribute.String("service.name", c.Service), attribute.String("service.version", version))
	e := &Exporter{content: c.Content, endpoint: c.Endpoint, warn: warn}
	e.tp = sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithBatcher(exp))
	e.tracer = e.tp.Tracer("github.com/dsh-dev/dsh")
	return e, nil
}

// Close sends what is left, waiting at most wait: a collector that does not
// answer loses those spans, with a warning, and never holds up dsh's exit.
func (e *Exporter) Close(wait time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := e.tp.Shutdown(ctx); err != nil {
		e.warn(fmt.Sprintf("telemetry: the spans left were not sent to %s within %s: %v", e.endpoint, wait, err))
	}
}

// quiet routes the SDK's own complaints (a malformed OTEL_* variable) to
// warn instead of the terminal, where they would cut through the chat. The
// SDK's logger and error handler are global: the first session's warn keeps
// them.
var quietOnce sync.Once

func quiet(warn func(string)) {
	quietOnce.Do(func() {
		otel.SetLogger(funcr.New(func(prefix, args string) { warn("telemetry: " + args) }, funcr.Options{}))
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { warn("telemetry: " + err.Error()) }))
	})
}
