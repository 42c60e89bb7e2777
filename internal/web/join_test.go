package web

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/control"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/toolset"
)

// joinedClient is a control client as dsh web's cli drives it.
type joinedClient struct{ *control.Client }

func (j joinedClient) Rename(title string) error { return j.Client.Rename(context.Background(), title) }

// A session live elsewhere (a host offering its control socket, as a chat
// does) waits on a write's permission; the page joins it, shows the box, and
// its answer lets the write run: the log says the web gave it. The page then
// renames the session through the same socket.
func TestDriveJoin(t *testing.T) {
	p, err := script.Parse([]byte(`{"turns": [
		{"tool_calls": [{"id": "w1", "name": "write", "args": {"path": "joined.txt", "content": "allowed from the page\n"}}]},
		{"text": "Done."}]}`))
	if err != nil {
		t.Fatal(err)
	}
	dir, root := t.TempDir(), t.TempDir()
	other, err := host.Create(host.Options{SessionDir: dir, Root: root, Ask: true, Mode: host.ModeDefault,
		Provider: func() (provider.Provider, error) { return p, nil },
		Live:     func(s *host.Session) (io.Closer, error) { return control.Serve(s) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	turn := make(chan error, 1)
	go func() {
		_, err := other.Submit(t.Context(), host.Input{Text: "write joined.txt", Where: host.Terminal})
		turn <- err
	}()

	srv, err := New(Options{Dir: dir, Token: testToken, Registry: toolset.New(toolset.Options{}), Location: time.UTC,
		Join: func(ctx context.Context, id string) (Live, error) {
			c, err := control.DialSession(ctx, dir, id, control.DialOptions{From: "web"})
			if err != nil {
				return Live{}, err
			}
			return Live{Session: joinedClient{c}, Events: c.Events()}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, srv)
	c := client(t, ts)
	id := other.ID()
	if _, page := get(t, c, ts.URL+"/s/"+id); !strings.Contains(page, `data-post="join"`) {
		t.Fatal("the live session's page does not offer to join it")
	}
	if code, body := post(t, c, ts.URL, "/s/"+id+"/join", nil); code != http.StatusOK {
		t.Fatalf("join: %d %s", code, body)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	ctl := readEvents(t, ctx, c, ts.URL+"/s/"+id+"/control", "")
	ask := waitEvent(t, ctx, ctl, "ask", regexp.MustCompile(`data-decision="allow_once"`))
	key := askKey.FindStringSubmatch(ask.data)[1]
	if code, body := post(t, c, ts.URL, "/s/"+id+"/answer/"+key, map[string]any{"decision": "allow_once"}); code != http.StatusNoContent {
		t.Fatalf("answer: %d %s", code, body)
	}
	if err := <-turn; err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "joined.txt")); err != nil || string(b) != "allowed from the page\n" {
		t.Errorf("joined.txt: %q %v", b, err)
	}
	if code, body := post(t, c, ts.URL, "/s/"+id+"/rename", map[string]any{"title": "the joined one"}); code != http.StatusNoContent {
		t.Fatalf("rename: %d %s", code, body)
	}
	if other.Title() != "the joined one" {
		t.Errorf("the session's title is %q", other.Title())
	}
	recs, err := session.ReadFile(other.Path())
	if err != nil {
		t.Fatal(err)
	}
	from := ""
	for _, r := range recs {
		if r.Type == session.TypeDecision {
			from = r.From
		}
	}
	if from != "web" {
		t.Errorf("the decision was logged from %q, want web", from)
	}
	// The page says who answered, as the terminal does.
	if _, page := get(t, c, ts.URL+"/s/"+id); !strings.Contains(page, "allowed once from web") {
		t.Error("the session's page does not say the call was allowed from web")
	}
}

func newTestServer(t *testing.T, srv *Server) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ts.Close()
		_ = srv.Close()
	})
	return ts
}
