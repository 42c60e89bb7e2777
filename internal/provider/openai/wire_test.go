package openai

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dsh-dev/dsh/internal/provider"
)

// TestStreamErrorEvent: an error the server sends inside the stream ends it
// with that error, retried like any broken stream while nothing was shown.
func TestStreamErrorEvent(t *testing.T) {
	s := newServer(t, func(n int, w http.ResponseWriter) {
		if n == 0 {
			writeSSE(w, `data: {"error":{"message":"model overloaded","code":503}}`+"\n\n")
			return
		}
		writeSSE(w, simpleText("again")...)
	})
	rec := &recorder{}
	p := newProvider(t, s, Config{Backoff: rec.backoff, MaxRetries: 1})
	resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	if err != nil || resp.Message.Parts[0].Text != "again" || len(rec.calls) != 1 {
		t.Fatalf("resp %+v err %v after %d backoffs", resp, err, len(rec.calls))
	}
	s2 := newServer(t, func(_ int, w http.ResponseWriter) {
		writeSSE(w, `data: {"error":{"message":"model overloaded"}}`+"\n\n")
	})
	p = newProvider(t, s2, Config{MaxRetries: -1})
	_, err = p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	if err == nil || !strings.Contains(err.Error(), `received error while streaming: {"message":"model overloaded"}`) {
		t.Errorf("error %v", err)
	}
}

// TestChunkOfAnotherCompletion: a chunk whose id is not the stream's is
// malformed, and not retried.
func TestChunkOfAnotherCompletion(t *testing.T) {
	other := strings.Replace(content("b"), "chatcmpl-7", "chatcmpl-8", 1)
	s := newServer(t, func(_ int, w http.ResponseWriter) { writeSSE(w, content("a"), other, chunk(`{}`, "stop"), done) })
	p := newProvider(t, s, Config{Backoff: (&recorder{}).backoff})
	_, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "openai: malformed stream chunk: ") || s.requests() != 1 {
		t.Errorf("error %v after %d requests", err, s.requests())
	}
}

// TestUnauthorizedPlainBody: a status without a JSON body is still the
// status's error.
func TestUnauthorizedPlainBody(t *testing.T) {
	s := newServer(t, func(_ int, w http.ResponseWriter) { http.Error(w, "no", http.StatusUnauthorized) })
	p := newProvider(t, s, Config{APIKey: "sk-bad"})
	_, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	if !errors.Is(err, provider.ErrAuth) || s.requests() != 1 {
		t.Errorf("error %v after %d requests", err, s.requests())
	}
}

// TestListModels lists GET /models with the key, tries once more after a
// server error, and not after a refusal.
func TestListModels(t *testing.T) {
	var calls atomic.Int32
	fail := http.StatusServiceUnavailable
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if r.URL.Path != "/v1/models" || r.Header.Get("Authorization") != "Bearer k" {
			t.Errorf("%s with %q", r.URL.Path, r.Header.Get("Authorization"))
		}
		if n == 1 {
			w.WriteHeader(fail)
			return
		}
		_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"m1","object":"model"},{"id":"m2"}]}`))
	}))
	defer srv.Close()
	ids, err := ListModels(context.Background(), srv.Client(), srv.URL+"/v1/", "k")
	if err != nil || strings.Join(ids, " ") != "m1 m2" || calls.Load() != 2 {
		t.Errorf("ids %q err %v after %d calls", ids, err, calls.Load())
	}
	calls.Store(0)
	fail = http.StatusForbidden
	var ae *apiError
	if _, err := ListModels(context.Background(), srv.Client(), srv.URL+"/v1", "k"); !errors.As(err, &ae) ||
		ae.StatusCode != http.StatusForbidden || calls.Load() != 1 {
		t.Errorf("a refusal: err %v after %d calls", err, calls.Load())
	}
}
