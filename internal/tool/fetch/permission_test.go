package fetch_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/tool/fetch"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// calls answers each request with the next message: a web_fetch of each URL in
// turn, then the end of the turn.
type calls struct {
	mu   sync.Mutex
	urls []string
}

func (c *calls) Name() string { return "calls" }

func (c *calls) Stream(context.Context, provider.Request, func(provider.Delta)) (*provider.Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.urls) == 0 {
		return &provider.Response{Message: provider.Message{Role: provider.RoleAssistant,
			Parts: []provider.Part{{Type: provider.PartText, Text: "done"}}}, StopReason: provider.StopEndTurn}, nil
	}
	u := c.urls[0]
	c.urls = c.urls[1:]
	return &provider.Response{Message: provider.Message{Role: provider.RoleAssistant, Parts: []provider.Part{{
		Type: provider.PartToolUse, ID: fmt.Sprint("c", len(c.urls)), Name: "web_fetch", Args: jsontext.Value(`{"url":"` + u + `"}`)}}},
		StopReason: provider.StopToolUse}, nil
}

// "Always" for a host allows that host for the session, and no other.
func TestPermissionIsPerHost(t *testing.T) {
	hit := func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "page") }
	a, b := httptest.NewServer(http.HandlerFunc(hit)), httptest.NewServer(http.HandlerFunc(hit))
	defer a.Close()
	defer b.Close()
	ws, err := workspace.New(t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	ts := tool.NewSession("s", ws)
	defer ts.Close()
	log, err := session.Create(t.TempDir(), "s", ws.Root(), session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	var asked []string
	permit := func(_ context.Context, req agent.PermissionRequest) (agent.Decision, error) {
		asked = append(asked, req.Approval.Label)
		return agent.AllowAlways, nil
	}
	ag := agent.New(agent.Config{Provider: &calls{urls: []string{a.URL + "/1", a.URL + "/2", b.URL + "/1"}},
		Registry: tool.NewRegistry(fetch.Tool()), Log: log, Tools: ts, Permit: permit})
	if _, err := ag.Prompt(t.Context(), "fetch"); err != nil {
		t.Fatal(err)
	}
	host := func(u string) string { return "fetching from " + strings.TrimPrefix(u, "http://") }
	if want := []string{host(a.URL), host(b.URL)}; !slices.Equal(asked, want) {
		t.Errorf("asked %q, want %q", asked, want)
	}
}
