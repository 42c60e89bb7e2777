package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// otlpHTTP sends spans as OTLP/HTTP requests, protobuf or JSON (encode.go).
// It stands in for the SDK's otlptracehttp, whose collector package brings
// gRPC and, through it, html/template, which keeps every exported method in
// the binary (+24 MB; with this, the SDK adds 1 MB).
type otlpHTTP struct {
	url     string
	headers map[string]string
	json    bool
	gzip    bool
	client  *http.Client
	warn    func(string)
	once    sync.Once
}

// ExportSpans sends spans. A failure is told the first time and kept from
// the SDK, whose global handler would print it on the terminal every time.
func (x *otlpHTTP) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if err := x.send(ctx, spans); err != nil && !errors.Is(err, context.Canceled) {
		x.once.Do(func() { x.warn(fmt.Sprintf("telemetry: spans could not be sent to %s (said once): %v", x.url, err)) })
	}
	return nil
}

func (x *otlpHTTP) send(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	body, ctype := protoRequest(spans), "application/x-protobuf"
	if x.json {
		var err error
		if body, err = jsonRequest(spans); err != nil {
			return err
		}
		ctype = "application/json"
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
	req.Header.Set("Content-Type", ctype)
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
