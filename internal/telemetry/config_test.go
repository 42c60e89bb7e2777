package telemetry

import (
	"reflect"
	"testing"
	"time"
)

// The OTEL_* variables turn the export on (an endpoint, or the otlp
// exporter named), off (none, or the SDK disabled) and shape it, as the
// OpenTelemetry specification reads them; nothing set is off.
func TestFromEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want *Config // nil: off
	}{
		{"nothing set is off", nil, nil},
		{"only the service name is off", map[string]string{"OTEL_SERVICE_NAME": "x"}, nil},
		{"the general endpoint gets the traces path", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"},
			&Config{Protocol: "http/protobuf", Endpoint: "http://collector:4318/v1/traces", Service: "dsh", Timeout: 10 * time.Second}},
		{"the traces endpoint is taken as it is, over the general one",
			map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://b/custom"},
			&Config{Protocol: "http/protobuf", Endpoint: "https://b/custom", Service: "dsh", Timeout: 10 * time.Second}},
		{"otlp named without an endpoint goes to the local collector", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"},
			&Config{Exporter: "otlp", Protocol: "http/protobuf", Endpoint: "http://localhost:4318/v1/traces", Service: "dsh", Timeout: 10 * time.Second}},
		{"none wins over an endpoint", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://a"}, nil},
		{"a disabled SDK wins over an endpoint", map[string]string{"OTEL_SDK_DISABLED": "TRUE", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://a"}, nil},
		{"headers, the traces' over the general ones, values decoded; protocol, service, content, gzip, timeout", map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT":       "http://a",
			"OTEL_EXPORTER_OTLP_HEADERS":        "authorization=Bearer%20tok, x-team=one,broken",
			"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-team=two",
			"OTEL_EXPORTER_OTLP_PROTOCOL":       "grpc",
			"OTEL_SERVICE_NAME":                 "ci-agent",
			"DSH_OTEL_CONTENT":                  "1",
			"OTEL_EXPORTER_OTLP_COMPRESSION":    "gzip",
			"OTEL_EXPORTER_OTLP_TIMEOUT":        "500",
		}, &Config{Protocol: "grpc", Endpoint: "http://a/v1/traces", Service: "ci-agent", Content: true, Gzip: true, Timeout: 500 * time.Millisecond,
			Headers: map[string]string{"authorization": "Bearer tok", "x-team": "two"}}},
		{"another exporter is kept for Start to refuse", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"},
			&Config{Exporter: "zipkin", Protocol: "http/protobuf", Endpoint: "http://localhost:4318/v1/traces", Service: "dsh", Timeout: 10 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FromEnv(func(k string) string { return tt.env[k] })
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("FromEnv = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// Start refuses what dsh does not send, saying which variable to change.
func TestStartRefuses(t *testing.T) {
	tests := []struct {
		name string
		c    Config
	}{
		{"grpc", Config{Protocol: "grpc", Endpoint: "http://localhost:4317"}},
		{"an unknown protocol", Config{Protocol: "carrier-pigeon", Endpoint: "http://a/v1/traces"}},
		{"another exporter", Config{Exporter: "zipkin", Protocol: ProtocolHTTPProtobuf, Endpoint: "http://a/v1/traces"}},
		{"an endpoint that is not a URL", Config{Protocol: ProtocolHTTPProtobuf, Endpoint: "localhost:4318"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if e, err := Start(tt.c, "test", func(string) {}); err == nil {
				e.Close(time.Second)
				t.Fatal("Start took it")
			} else {
				t.Log(err)
			}
		})
	}
}
