package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/config"
	"github.com/dsh-dev/dsh/internal/proctest"
	"github.com/dsh-dev/dsh/internal/tool"
)

// The fields of the configuration's server table and ours must stay the same.
var _ = ServerConfig(config.MCPServer{})

// pngMagic starts every PNG file.
var pngMagic = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}

// TestMain doubles as a stdio MCP server when DSH_MCP_TEST_SERVER is set: a
// real process for the stdio transport to start, crash and stop; and as the
// conformance suite's client under test (conformance_test.go).
func TestMain(m *testing.M) {
	if os.Getenv("DSH_MCP_TEST_SERVER") == "1" {
		if err := testServer().Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv(conformanceEnv) == "1" && len(os.Args) > 1 {
		if err := conformanceClient(os.Args[len(os.Args)-1]); err != nil {
			fmt.Fprintln(os.Stderr, "dsh conformance client:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type spawnArgs struct {
	Marker string `json:"marker"` // the children's sleep argument
}

type greetArgs struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

// testServer is the in-process Go server every transport test talks to.
func testServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "dsh-test", Version: "v0"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "greet", Description: "Greets someone.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, a greetArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Hello, " + a.Name + "!"}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "picture.make", Description: "Draws a picture."},
		func(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "here it is"},
				&sdk.ImageContent{MIMEType: "image/png", Data: append(pngMagic, 1, 2, 3)},
			}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "Always fails."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return nil, nil, errors.New("it went wrong")
		})
	sdk.AddTool(s, &sdk.Tool{Name: "crash", Description: "Kills the server."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "test server: crashing on purpose")
			os.Exit(3)
			return nil, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "spawn", Description: "Starts two children that outlive the call, one in a session of its own."},
		func(_ context.Context, _ *sdk.CallToolRequest, a spawnArgs) (*sdk.CallToolResult, any, error) {
			if err := exec.Command("sleep", a.Marker).Start(); err != nil {
				return nil, nil, err
			}
			if err := exec.Command("setsid", "-f", "sleep", a.Marker).Run(); err != nil {
				return nil, nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "started"}}}, nil, nil
		})
	return s
}

func stdioConfig(t *testing.T, name string) ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return ServerConfig{Name: name, Type: "stdio", Command: exe, Args: []string{"-test.run=^$"},
		Env: map[string]string{"DSH_MCP_TEST_SERVER": "1"}}
}

func start(t *testing.T, cfgs []ServerConfig, opts Options) *Servers {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Start(ctx, cfgs, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func find(t *testing.T, s *Servers, name string) tool.Tool {
	t.Helper()
	var names []string
	for _, tl := range s.Tools() {
		if tl.Name() == name {
			return tl
		}
		names = append(names, tl.Name())
	}
	t.Fatalf("no tool %s among %q", name, names)
	return nil
}

func run(t *testing.T, tl tool.Tool, args string) tool.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := tl.Run(ctx, tool.Env{}, []byte(args), nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestTransports runs the same calls over each transport the Go server speaks.
func TestTransports(t *testing.T) {
	httpSrv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return testServer() }, nil))
	t.Cleanup(httpSrv.Close)
	shared := testServer()
	sseSrv := httptest.NewServer(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return shared }, nil))
	t.Cleanup(sseSrv.Close)
	for _, cfg := range []ServerConfig{
		stdioConfig(t, "local"),
		{Name: "remote", Type: "http", URL: httpSrv.URL},
		{Name: "old", Type: "sse", URL: sseSrv.URL},
	} {
		t.Run(cfg.Type, func(t *testing.T) {
			cfg.Trusted = true // its hints are believed (TestHintsNeedTrust)
			s := start(t, []ServerConfig{cfg}, Options{})
			greet := find(t, s, "mcp__"+cfg.Name+"__greet")
			if !greet.ReadOnly() || greet.Permission() != tool.PermNone || greet.Kind() != "other" {
				t.Errorf("greet is readOnlyHint: read-only %v, permission %v", greet.ReadOnly(), greet.Permission())
			}
			if !strings.Contains(string(greet.Schema()), `"name"`) || !strings.Contains(greet.Description(), "Greets someone.") {
				t.Errorf("greet schema %s, description %q", greet.Schema(), greet.Description())
			}
			r := run(t, greet, `{"name":"Ada"}`)
			if r.IsError || r.TextOf() != "Hello, Ada!" {
				t.Errorf("greet = %+v", r)
			}

			pic := find(t, s, "mcp__"+cfg.Name+"__picture_make")
			if pic.ReadOnly() || pic.Permission() != tool.PermExecute {
				t.Errorf("an unannotated tool must ask: read-only %v, permission %v", pic.ReadOnly(), pic.Permission())
			}
			r = run(t, pic, `{}`)
			if len(r.Content) != 2 || r.Content[1].Type != "image" || r.Content[1].MimeType != "image/png" {
				t.Fatalf("picture = %+v", r)
			}
			if data, err := base64.StdEncoding.DecodeString(r.Content[1].Data); err != nil || !bytes.HasPrefix(data, pngMagic) {
				t.Errorf("image data does not decode to the PNG sent: %v", err)
			}
			res, ok := pic.PresentResult([]byte(`{}`), r).(*card.GenericResult)
			if !ok || len(res.Content) != 2 || res.Content[1].Type != "image" {
				t.Errorf("result card = %#v, want a generic card with the image", pic.PresentResult([]byte(`{}`), r))
			}

			r = run(t, find(t, s, "mcp__"+cfg.Name+"__fail"), `{}`)
			if !r.IsError || !strings.Contains(r.TextOf(), "it went wrong") {
				t.Errorf("fail = %+v", r)
			}
			if r := run(t, greet, `[1,2]`); !r.IsError {
				t.Errorf("non-object arguments were sent: %+v", r)
			}
		})
	}
}

func TestPresentCall(t *testing.T) {
	s := start(t, []ServerConfig{stdioConfig(t, "srv")}, Options{})
	greet := find(t, s, "mcp__srv__greet")
	preview, _ := greet.Preview(context.Background(), tool.Env{}, []byte(`{"name":"Ada"}`)) // logged with the call
	c, ok := greet.PresentCall([]byte(`{"name":"Ada"}`), preview).(*card.GenericCall)
	if !ok || c.Title != "srv: greet" || c.ToolKind != "other" || string(c.RawInput) != `{"name":"Ada"}` {
		t.Errorf("call card = %#v", c)
	}
	if c := find(t, s, "mcp__srv__greet").PresentCall([]byte(`{broken`), nil).(*card.GenericCall); c.RawInput != nil {
		t.Errorf("invalid JSON became raw input: %s", c.RawInput)
	}
	if r := find(t, s, "mcp__srv__fail").PresentResult(nil, tool.Errorf("x")); r != nil {
		t.Errorf("an error result got a card: %#v", r)
	}
}

// TestStartFailures: every server that cannot start is reported by name, with
// what it said; the others still start.
func TestStartFailures(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	s, err := Start(context.Background(), []ServerConfig{
		stdioConfig(t, "good"),
		{Name: "missing", Type: "stdio", Command: "/nonexistent/mcp-server"},
		{Name: "noisy", Type: "stdio", Command: "sh", Args: []string{"-c", "echo 'cannot find module x' >&2; exit 1"}},
		{Name: "gone", Type: "http", URL: dead.URL},
	}, Options{ConnectTimeout: 30 * time.Second})
	t.Cleanup(func() { _ = s.Close() })
	if got := s.Names(); len(got) != 1 || got[0] != "good" {
		t.Errorf("running servers = %q, want just good", got)
	}
	for _, name := range []string{"missing", "noisy", "gone"} {
		var se *StartError
		found := false
		for _, e := range unwrapAll(err) {
			if errors.As(e, &se) && se.Server == name {
				found = true
			}
		}
		if !found {
			t.Errorf("no StartError for %s in %v", name, err)
		}
	}
	if err == nil || !strings.Contains(err.Error(), "cannot find module x") {
		t.Errorf("the failing server's stderr is not in the error: %v", err)
	}
}

func unwrapAll(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// TestCrashRestartsOnce: a stdio server that dies is started again once, and
// told through OnRestart with why; its tools work again. The second death is
// final: told through OnExit, and calls to it are error results that say so.
func TestCrashRestartsOnce(t *testing.T) {
	events := make(chan string, 4)
	var relisted atomic.Int32
	s := start(t, []ServerConfig{stdioConfig(t, "fragile")}, Options{
		ToolsChanged: func() { relisted.Add(1) },
		OnRestart:    func(server string, err error) { events <- "restart " + server + ": " + err.Error() },
		OnExit:       func(server string, err error) { events <- "exit " + server + ": " + err.Error() },
	})
	next := func() string {
		t.Helper()
		select {
		case e := <-events:
			t.Log(e)
			return e
		case <-time.After(time.Minute):
			t.Fatal("no word of the server's death")
			return ""
		}
	}
	pgid := s.servers[0].conn().proc.Pgid
	if r := run(t, find(t, s, "mcp__fragile__crash"), `{}`); !r.IsError {
		t.Errorf("a call that killed the server succeeded: %+v", r)
	}
	if e := next(); !strings.HasPrefix(e, "restart fragile: ") || !strings.Contains(e, "crashing on purpose") {
		t.Errorf("first death = %q, want a restart naming the server with its stderr", e)
	}
	if relisted.Load() != 1 {
		t.Errorf("the restarted server's tools were told %d times, want once", relisted.Load())
	}
	proctest.GroupGone(t, pgid)
	if r := run(t, find(t, s, "mcp__fragile__greet"), `{"name":"again"}`); r.IsError || r.TextOf() != "Hello, again!" {
		t.Errorf("a call after the restart = %+v", r)
	}
	if r := run(t, find(t, s, "mcp__fragile__crash"), `{}`); !r.IsError {
		t.Errorf("a call that killed the server succeeded: %+v", r)
	}
	if e := next(); !strings.HasPrefix(e, "exit fragile: ") || !strings.Contains(e, "after it was started again once") {
		t.Errorf("second death = %q, want the final one", e)
	}
	r := run(t, find(t, s, "mcp__fragile__greet"), `{"name":"x"}`)
	if !r.IsError || !strings.Contains(r.TextOf(), "MCP server fragile is not running") {
		t.Errorf("a call to the dead server = %+v", r)
	}
	if !s.Stopped("fragile") {
		t.Error("Stopped says the dead server runs")
	}
	select {
	case e := <-events:
		t.Errorf("more word after the final death: %q", e)
	default:
	}
}

// TestCloseDuringRestart: Close while a dead server is being started again
// leaves no process of either connection, and no word of a death.
func TestCloseDuringRestart(t *testing.T) {
	events := make(chan string, 4)
	s := start(t, []ServerConfig{stdioConfig(t, "fragile")}, Options{
		OnRestart: func(server string, _ error) { events <- "restart " + server },
		OnExit:    func(server string, _ error) { events <- "exit " + server },
	})
	if r := run(t, find(t, s, "mcp__fragile__crash"), `{}`); !r.IsError {
		t.Errorf("a call that killed the server succeeded: %+v", r)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	c := s.servers[0].conn()
	select {
	case <-c.exited:
	default:
		t.Error("Close returned while the server's process ran")
	}
	select {
	case e := <-events:
		if e != "restart fragile" { // the restart may have been done before Close
			t.Errorf("word after Close: %q", e)
		}
	default:
	}
}

// TestCloseLeavesNoProcess: Close ends the server and what it started, also
// what left its process group.
func TestCloseLeavesNoProcess(t *testing.T) {
	var exits []string
	s := start(t, []ServerConfig{stdioConfig(t, "parent")}, Options{OnExit: func(s string, _ error) { exits = append(exits, s) }})
	mark := proctest.Marker()
	if r := run(t, find(t, s, "mcp__parent__spawn"), `{"marker":"`+mark+`"}`); r.TextOf() != "started" {
		t.Fatalf("spawn = %+v", r)
	}
	proctest.WaitRunning(t, mark, 2)
	pgid := s.servers[0].conn().proc.Pgid
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	proctest.GroupGone(t, pgid)
	proctest.NoneRunning(t, mark)
	if len(exits) != 0 {
		t.Errorf("OnExit called for servers Close stopped: %q", exits)
	}
}

func TestToolName(t *testing.T) {
	for _, tc := range []struct{ server, tool, want string }{
		{"files", "read_file", "mcp__files__read_file"},
		{"my.server", "get tiny/image", "mcp__my_server__get_tiny_image"},
		{"s", "naïve", "mcp__s__na_ve"},
	} {
		if got := ToolName(tc.server, tc.tool); got != tc.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", tc.server, tc.tool, got, tc.want)
		}
	}
	long1, long2 := ToolName("server", strings.Repeat("a", 80)+"1"), ToolName("server", strings.Repeat("a", 80)+"2")
	if len(long1) != MaxNameLen || len(long2) != MaxNameLen || long1 == long2 {
		t.Errorf("long names %q and %q: want %d characters each, distinct", long1, long2, MaxNameLen)
	}
}

// TestNameCollision: two tools that sanitise alike both stay callable.
func TestNameCollision(t *testing.T) {
	srv := &server{name: "s", tools: []*sdk.Tool{{Name: "a.b"}, {Name: "a_b"}}}
	ts := srv.adapt(map[string]bool{})
	if len(ts) != 2 || ts[0].Name() == ts[1].Name() {
		t.Fatalf("names %q and %q collide", ts[0].Name(), ts[1].Name())
	}
	for _, tl := range ts {
		if !validName(tl.Name()) {
			t.Errorf("invalid tool name %q", tl.Name())
		}
	}
}

func validName(s string) bool {
	return len(s) > 0 && len(s) <= MaxNameLen && !unsafeChars().MatchString(s)
}

func TestServerEnv(t *testing.T) {
	env := serverEnv([]string{"PATH=/bin", "ANTHROPIC_API_KEY=sk", "GITHUB_TOKEN=gh", "HOME=/h", "MY_PASSWORD=p"},
		map[string]string{"GITHUB_TOKEN": "given", "EXTRA": "1"})
	got := strings.Join(env, " ")
	if got != "PATH=/bin HOME=/h EXTRA=1 GITHUB_TOKEN=given" {
		t.Errorf("server env = %q: want dsh's credentials removed and the server's own variables added", got)
	}
}

func TestObjectSchema(t *testing.T) {
	for in, want := range map[string]string{
		"":                                       `{"type":"object","properties":{}}`,
		`{"properties":{"a":{"type":"string"}}}`: `{"properties":{"a":{"type":"string"}},"type":"object"}`,
		`{"type":"object"}`:                      `{"type":"object"}`,
		`[1]`:                                    `{"type":"object","properties":{}}`,
	} {
		var v any
		if in != "" {
			v = jsonRaw(in)
		}
		if got := string(objectSchema(v)); got != want {
			t.Errorf("objectSchema(%s) = %s, want %s", in, got, want)
		}
	}
}

func jsonRaw(s string) any { return json.RawMessage(s) }
