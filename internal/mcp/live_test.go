package mcp

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-dev/dsh/internal/tool"
)

// TestProgressLogsRoots: a server's progress shows on the running call,
// its log messages go to the debug log, and its roots are the session's
// directories.
func TestProgressLogsRoots(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "busy", Version: "v0"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "work", Description: "Works."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			tok := req.Params.GetProgressToken()
			for i := 1; i <= 2; i++ {
				if err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i),
					Total: 2, Message: "step\x1b[2J"}); err != nil {
					return nil, nil, err
				}
			}
			if err := req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "info", Data: "hello log"}); err != nil { //nolint:staticcheck // what servers of protocols before 2026-07-28 do
				return nil, nil, err
			}
			roots, err := req.Session.ListRoots(ctx, nil) //nolint:staticcheck // what servers of protocols before 2026-07-28 do
			if err != nil {
				return nil, nil, err
			}
			var uris []string
			for _, r := range roots.Roots {
				uris = append(uris, r.URI)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(uris, " ")}}}, nil, nil
		})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	var logBuf syncBuffer
	servers := start(t, []ServerConfig{{Name: "busy", Type: "http", URL: srv.URL}}, Options{
		Roots: []string{"/work/space", "/also here"},
		Log:   slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	// The server logs at info only when the client set a level; ask for all.
	if err := servers.servers[0].conn().session.SetLoggingLevel(context.Background(), &sdk.SetLoggingLevelParams{Level: "debug"}); err != nil { //nolint:staticcheck // what servers of protocols before 2026-07-28 do
		t.Fatal(err)
	}
	var progress strings.Builder
	r, err := find(t, servers, "mcp__busy__work").Run(context.Background(),
		tool.Env{Progress: func(c string) { progress.WriteString(c) }}, []byte(`{}`), nil)
	if err != nil || r.IsError {
		t.Fatalf("work = %+v, %v", r, err)
	}
	if got := r.TextOf(); got != "file:///also%20here file:///work/space" {
		t.Errorf("roots = %q", got)
	}
	if got := progress.String(); got != "[progress 1/2 step]\n[progress 2/2 step]\n" {
		t.Errorf("progress = %q", got)
	}
	if got := logBuf.String(); !strings.Contains(got, "MCP server log") || !strings.Contains(got, "hello log") {
		t.Errorf("debug log = %q", got)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestListChanged: a server's new prompts reach the session's commands.
func TestListChanged(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "moving", Version: "v0"}, nil)
	handler := func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return &sdk.GetPromptResult{}, nil
	}
	s.AddPrompt(&sdk.Prompt{Name: "first"}, handler)
	sdk.AddTool(s, &sdk.Tool{Name: "a", Description: "A."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{}, nil, nil
		})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	servers := start(t, []ServerConfig{{Name: "moving", Type: "http", URL: srv.URL}}, Options{})
	// The client listens for the server's notifications on a stream it opens
	// with a GET; a call makes sure the session is fully up first.
	if r := run(t, find(t, servers, "mcp__moving__a"), `{}`); r.IsError {
		t.Fatalf("a = %+v", r)
	}
	s.AddPrompt(&sdk.Prompt{Name: "second"}, handler)
	// Nothing signals the end of the new listing: look until it is there.
	deadline := time.Now().Add(30 * time.Second)
	for len(servers.Prompts()) != 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if ps := servers.Prompts(); len(ps) != 2 || ps[1].Name != "second" {
		t.Errorf("prompts after the change = %+v", ps)
	}
}

// TestRelistCutByTheEnd: a server that changes its tools as the session
// ends (the reference server does, every few seconds) leaves no warning
// behind: the listing the end cut short is not a failure to tell.
func TestRelistCutByTheEnd(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "moving", Version: "v0"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "a", Description: "A."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{}, nil, nil
		})
	lists, entered := 0, make(chan struct{})
	var mu sync.Mutex
	var ending <-chan struct{} // the client's servers' life
	s.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method == "tools/list" {
				mu.Lock()
				lists++
				again, end := lists > 1, ending
				mu.Unlock()
				if again { // the listing the change asks for: answered once the session ends
					close(entered)
					<-end
				}
			}
			return next(ctx, method, req)
		}
	})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	var told syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	servers, err := Start(ctx, []ServerConfig{{Name: "moving", Type: "http", URL: srv.URL}},
		Options{Notice: func(server, msg string) { _, _ = told.Write([]byte(server + ": " + msg + "\n")) }})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	ending = servers.servers[0].life.Done()
	mu.Unlock()
	if r := run(t, find(t, servers, "mcp__moving__a"), `{}`); r.IsError {
		t.Fatalf("a = %+v", r)
	}
	sdk.AddTool(s, &sdk.Tool{Name: "b", Description: "B."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{}, nil, nil
		})
	select {
	case <-entered:
	case <-ctx.Done():
		t.Fatal("the change was not listed again")
	}
	_ = servers.Close()
	if got := told.String(); got != "" {
		t.Errorf("told, as the session ended: %q", got)
	}
}
