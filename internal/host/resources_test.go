package host

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/command"
	"github.com/dsh-dev/dsh/internal/mcp"
	"github.com/dsh-dev/dsh/internal/session"
)

const everythingDoc = "demo://resource/static/document/architecture.md"

// everythingDocText is what the reference server serves as everythingDoc: the
// file it ships.
func everythingDocText(t *testing.T, bin string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(real), "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMentionAttachesResource: a prompt's @SERVER:URI is read from the
// reference server and attached as a resource block of the user record, which
// the model gets; a mention of a resource or server that is not there stays
// text, is told to the user, and the prompt runs. A reloaded session, its
// server gone, sends the attached text again from the log: nothing is read on
// load. /mcp lists the server and its resources.
func TestMentionAttachesResource(t *testing.T) {
	bin := npmBin(t, "mcp-server-everything")
	doc := everythingDocText(t, bin)
	root, dir := t.TempDir(), t.TempDir()
	p := scripted(t, `{"turns": [{"text": "read it"}, {"text": "again"}]}`)
	o := options(t, root, dir, p)
	o.MCP = []mcp.ServerConfig{{Name: "everything", Type: "stdio", Command: bin, Args: []string{"stdio"}},
		{Name: "broken", Type: "stdio", Command: "/nonexistent/mcp-server"}}
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	told := noticesOf(s)
	rs, err := s.Resources(t.Context())
	if err != nil || !hasResource(rs, "everything", everythingDoc) {
		t.Fatalf("resources %+v, %v", rs, err)
	}

	prompt := "summarise @" + "everything:" + everythingDoc + ". Also @everything:demo://resource/static/document/nope.md and @nowhere:test://x and @main.go"
	if _, err := s.Prompt(t.Context(), prompt); err != nil {
		t.Fatal(err)
	}
	user := userRecord(t, s.Path())
	if !strings.HasPrefix(user.Text, prompt+"\n\n[dsh: MCP server broken") || len(user.Content) != 1 || user.Content[0] != card.Resource(everythingDoc, doc) {
		t.Errorf("the user record: %q with %+v", user.Text, user.Content)
	}
	sent := p.last(t).Messages[0].Parts[0].Text
	if !strings.Contains(sent, `<attached file="`+everythingDoc+`">`) || !strings.Contains(sent, doc) {
		t.Errorf("the model was not sent the resource:\n%s", sent)
	}
	notices := strings.Join(told(), "\n")
	for _, want := range []string{
		"not attached: @everything:demo://resource/static/document/nope.md: MCP server everything: no such resource; the prompt is sent without it",
		"not attached: @nowhere:test://x: no MCP server nowhere in this session (/mcp lists them)",
	} {
		if !strings.Contains(notices, want) {
			t.Errorf("the user was not told %q; told:\n%s", want, notices)
		}
	}
	if strings.Contains(notices, "late: ") {
		t.Errorf("a note came after the prompt's record:\n%s", notices)
	}
	if strings.Contains(notices, "main.go") {
		t.Errorf("@main.go is a file, not a resource mention:\n%s", notices)
	}

	if _, ok := command.Find(s.Commands(), "mcp"); !ok {
		t.Error("a session with MCP servers does not offer /mcp")
	}
	r, err := s.Submit(t.Context(), Input{Text: "/mcp", Where: Both})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"MCP servers:\n- everything: ", " tools, ", " prompts (/mcp__everything__…), ", "- broken: not running",
		"\n- @everything:" + everythingDoc + " — architecture.md, text/markdown",
		"\n- @everything:demo://resource/dynamic/text/{resourceId} — template: fill in the {…}, "} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("/mcp does not say %q:\n%s", want, r.Text)
		}
	}
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	o.MCP = nil
	l, err := Load(o, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	if _, err := l.Prompt(t.Context(), "and now?"); err != nil {
		t.Fatal(err)
	}
	if again := p.last(t).Messages[0].Parts[0].Text; again != sent {
		t.Errorf("the reloaded session sends another first prompt:\n%s\n--- live\n%s", again, sent)
	}
	if r, _ := l.Submit(t.Context(), Input{Text: "/mcp", Where: Both}); !strings.HasPrefix(r.Text, "This session has no MCP servers") {
		t.Errorf("/mcp without servers: %q", r.Text)
	}
}

func hasResource(rs []Resource, server, uri string) bool {
	for _, r := range rs {
		if r.Server == server && r.URI == uri {
			return true
		}
	}
	return false
}

// noticesOf gathers the notices s streams from now on. A notice streamed
// after a user record (it must come before its prompt's) is marked "late: ".
func noticesOf(s *Session) func() []string {
	var mu sync.Mutex
	var told []string
	user := false
	sub := s.Subscribe(func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case e.Kind == KindRecord && e.Record.Type == session.TypeUser:
			user = true
		case e.Kind == KindNotice && user:
			told = append(told, "late: "+e.Text)
		case e.Kind == KindNotice:
			told = append(told, e.Text)
		}
	})
	return func() []string {
		sub.Flush(5 * time.Second)
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(told)
	}
}

func userRecord(t *testing.T, path string) session.Record {
	t.Helper()
	recs, err := session.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Type == session.TypeUser {
			return r
		}
	}
	t.Fatal("no user record")
	return session.Record{}
}

func TestIsMention(t *testing.T) {
	for word, want := range map[string]bool{
		"everything:demo://resource/static/document/a.md": true,
		"fs:file:///tmp/x":  true,
		"main.go":           false,
		"a:b":               false, // no scheme after the server
		"C:/x":              false,
		"srv:x:y":           true,
		"internal/a:b:c.go": false,
	} {
		if got := IsMention(word); got != want {
			t.Errorf("IsMention(%q) = %v, want %v", word, got, want)
		}
	}
}

// TestMentionEdges: a sentence's full stop after a mention is not the URI's,
// but a URI's own trailing full stop is kept; a prompt attaches at most
// maxMentions resources and says so about the rest.
func TestMentionEdges(t *testing.T) {
	srv := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "edges", Version: "v0"}, nil)
	for _, uri := range []string{"test://end.", "test://plain", "test://1", "test://2", "test://3", "test://4", "test://5",
		"test://6", "test://7", "test://8", "test://9"} {
		srv.AddResource(&mcpsdk.Resource{URI: uri, Name: uri}, func(context.Context, *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
			return &mcpsdk.ReadResourceResult{Contents: []*mcpsdk.ResourceContents{{URI: uri, Text: "text of " + uri}}}, nil
		})
	}
	web := httptest.NewServer(mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return srv }, nil))
	t.Cleanup(web.Close)
	root, dir := t.TempDir(), t.TempDir()
	p := scripted(t, `{"turns": [{"text": "one"}, {"text": "two"}]}`)
	o := options(t, root, dir, p)
	o.MCP = []mcp.ServerConfig{{Name: "srv", Type: "http", URL: web.URL}}
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if _, err := s.Prompt(t.Context(), "See @srv:test://end. and @srv:test://plain."); err != nil {
		t.Fatal(err)
	}
	user := userRecord(t, s.Path())
	if len(user.Content) != 2 || user.Content[0] != card.Resource("test://end.", "text of test://end.") ||
		user.Content[1] != card.Resource("test://plain", "text of test://plain") {
		t.Errorf("attached %+v", user.Content)
	}

	var many []string
	for i := range 11 {
		many = append(many, fmt.Sprintf("@srv:test://%d", i))
	}
	notices := noticesOf(s)
	if _, err := s.Prompt(t.Context(), strings.Join(many, " ")); err != nil {
		t.Fatal(err)
	}
	told := notices()
	// test://0 is not there; test://10 is the eleventh.
	if len(told) != 2 || !strings.Contains(told[0], "@srv:test://0: MCP server srv: no such resource") ||
		told[1] != "not attached: @srv:test://10: a prompt attaches at most 10 resources" {
		t.Errorf("told %q", told)
	}
}
