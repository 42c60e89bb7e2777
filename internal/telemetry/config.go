// Package telemetry exports a session's events as OpenTelemetry traces over
// OTLP, for teams that collect them: a span per turn, per model call (model,
// tokens, cost) and per tool call (tool, duration, permission decision). It is
// off unless the standard OTEL_* variables ask for it, and then exports names,
// sizes, durations, tokens and decisions — never what the user or the model
// wrote, unless DSH_OTEL_CONTENT=1 says so.
//
// Nothing of the OpenTelemetry SDK runs before Start: reading the variables
// (FromEnv) touches none of it, so a dsh that does not export pays nothing.
package telemetry

import (
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The protocols OTEL_EXPORTER_OTLP_PROTOCOL names that dsh sends (not grpc:
// see otlpHTTP).
const (
	ProtocolHTTPProtobuf = "http/protobuf"
	ProtocolHTTPJSON     = "http/json"
)

// defaultTimeout is how long one export may take (OTEL_EXPORTER_OTLP_TIMEOUT).
const defaultTimeout = 10 * time.Second

// Config is the export the environment asks for.
type Config struct {
	// Exporter is OTEL_TRACES_EXPORTER: "" or "otlp" (Start refuses others).
	Exporter string
	// Protocol is OTEL_EXPORTER_OTLP_PROTOCOL (Start refuses all but the
	// Protocol constants).
	Protocol string
	// Endpoint is the traces URL spans are posted to.
	Endpoint string
	Headers  map[string]string
	Gzip     bool          // OTEL_EXPORTER_OTLP_COMPRESSION=gzip
	Timeout  time.Duration // of one export
	Service  string        // service.name
	// Content adds the prompts' text, the calls' arguments and the results'
	// text to the spans (DSH_OTEL_CONTENT=1).
	Content bool
}

// FromEnv is the export that the OTEL_* variables ask for, or nil when they
// ask for none: no endpoint and no OTEL_TRACES_EXPORTER, OTEL_TRACES_EXPORTER
// none, or OTEL_SDK_DISABLED true.
func FromEnv(getenv func(string) string) *Config {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	if strings.EqualFold(get("OTEL_SDK_DISABLED"), "true") {
		return nil
	}
	exporter := strings.ToLower(get("OTEL_TRACES_EXPORTER"))
	traces, base := get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), get("OTEL_EXPORTER_OTLP_ENDPOINT")
	if exporter == "none" || exporter == "" && traces == "" && base == "" {
		return nil
	}
	c := &Config{Exporter: exporter, Service: get("OTEL_SERVICE_NAME"), Content: get("DSH_OTEL_CONTENT") == "1"}
	c.Protocol = strings.ToLower(first(get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), get("OTEL_EXPORTER_OTLP_PROTOCOL"), ProtocolHTTPProtobuf))
	if c.Service == "" {
		c.Service = "dsh"
	}
	// The signal's own endpoint is the URL itself; the general one is a
	// base, to which OTLP/HTTP adds the signal's path.
	switch {
	case traces != "":
		c.Endpoint = traces
	case base != "":
		c.Endpoint = strings.TrimSuffix(base, "/") + "/v1/traces"
	default:
		c.Endpoint = "http://localhost:4318/v1/traces"
	}
	c.Gzip = strings.EqualFold(first(get("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION"), get("OTEL_EXPORTER_OTLP_COMPRESSION")), "gzip")
	c.Timeout = defaultTimeout
	if ms, err := strconv.Atoi(first(get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"), get("OTEL_EXPORTER_OTLP_TIMEOUT"))); err == nil && ms > 0 {
		c.Timeout = time.Duration(ms) * time.Millisecond
	}
	c.Headers = headers(get("OTEL_EXPORTER_OTLP_HEADERS"), nil)
	c.Headers = headers(get("OTEL_EXPORTER_OTLP_TRACES_HEADERS"), c.Headers)
	return c
}

func first(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// headers adds the W3C-baggage-style list "k1=v1,k2=v2" (values
// percent-encoded) to into; a malformed pair is left out.
func headers(list string, into map[string]string) map[string]string {
	for pair := range strings.SplitSeq(list, ",") {
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			continue
		}
		if dv, err := url.PathUnescape(strings.TrimSpace(v)); err == nil {
			v = dv
		}
		if into == nil {
			into = map[string]string{}
		}
		into[k] = strings.TrimSpace(v)
	}
	return into
}
