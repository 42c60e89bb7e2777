package mcp

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-dev/dsh/internal/card"
)

func listResources(t *testing.T, s *Servers) []Resource {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rs, err := s.Resources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func readResource(t *testing.T, s *Servers, server, uri string) ([]card.Content, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return s.ReadResource(ctx, server, uri)
}

// TestEverythingResources: the reference server's static documents and its
// templates are listed; one read is the document's text, a blob of text is
// text, and a resource it does not have is ErrNoResource.
func TestEverythingResources(t *testing.T) {
	bin := npmBin(t, "mcp-server-everything")
	s := start(t, []ServerConfig{{Name: "everything", Type: "stdio", Command: bin, Args: []string{"stdio"}}}, Options{})
	const doc = "demo://resource/static/document/architecture.md"
	var found, template bool
	for _, r := range listResources(t, s) {
		if r.Server != "everything" {
			t.Errorf("resource %+v of another server", r)
		}
		found = found || r.URI == doc && r.Name == "architecture.md" && r.MIMEType == "text/markdown" && !r.Template
		template = template || r.URI == "demo://resource/dynamic/text/{resourceId}" && r.Template
	}
	if !found || !template {
		t.Fatalf("listed: %+v; want %s and the text template", listResources(t, s), doc)
	}

	blocks, err := readResource(t, s, "everything", doc)
	if err != nil {
		t.Fatal(err)
	}
	// The server serves the file it ships; its docs sit next to the binary's package.
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(filepath.Dir(real), "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 1 || blocks[0] != card.Resource(doc, string(want)) {
		t.Errorf("read %s = %+v", doc, blocks)
	}

	blocks, err = readResource(t, s, "everything", "demo://resource/dynamic/blob/7")
	if err != nil || len(blocks) != 1 || blocks[0].Type != card.ContentResource ||
		!strings.HasPrefix(blocks[0].Text, "Resource 7: This is a base64 blob") {
		t.Errorf("the blob template's resource (text/plain) = %+v, %v", blocks, err)
	}

	if _, err := readResource(t, s, "everything", "demo://resource/static/document/nope.md"); !errors.Is(err, ErrNoResource) {
		t.Errorf("a missing resource: %v", err)
	}
	if _, err := readResource(t, s, "other", doc); err == nil || !strings.Contains(err.Error(), "no MCP server other") {
		t.Errorf("a missing server: %v", err)
	}
}

// hostileServer names its resources with escape sequences, offers URIs that
// read as others, and serves more than anyone should attach.
func hostileServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "hostile", Version: "v0"}, nil)
	text := func(uri, body string) sdk.ResourceHandler {
		return func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: body}}}, nil
		}
	}
	huge := strings.Repeat("é", 1<<20) // 2 MiB, two bytes a rune
	s.AddResource(&sdk.Resource{URI: "test://huge", Name: "\x1b[2J\x1b[31mhuge\x1b[0m\nsecond line\u202e", Description: strings.Repeat("d", 1000)},
		text("test://huge", huge))
	s.AddResource(&sdk.Resource{URI: "test://a/evil\u202etxt.exe", Name: "bidi"}, text("test://a/evil", "x"))
	s.AddResource(&sdk.Resource{URI: "test://a/with space", Name: "space"}, text("test://a/with space", "x"))
	s.AddResource(&sdk.Resource{URI: "test://liar", Name: "liar"}, text("test://other\x1b[31m", "what the liar says"))
	s.AddResource(&sdk.Resource{URI: "test://many", Name: "many"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		var cs []*sdk.ResourceContents
		for i := range 1000 {
			cs = append(cs, &sdk.ResourceContents{URI: fmt.Sprintf("test://many/%d", i), Text: strings.Repeat("m", 1<<10)})
		}
		return &sdk.ReadResourceResult{Contents: cs}, nil
	})
	s.AddResource(&sdk.Resource{URI: "test://png", Name: "png"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "test://png", MIMEType: "text/plain", Blob: append(pngMagic, 0, 0, 0, 13)}}}, nil
	})
	s.AddResource(&sdk.Resource{URI: "test://bin", Name: "bin"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "test://bin", MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2, 0xff}}}}, nil
	})
	return s
}

// TestHostileResources: names are cleaned for one line, URIs that cannot be
// shown as they are left out, a huge text is cut, a flood of contents is
// bounded, a lying server's URI is not shown, and binaries are an image (by
// their bytes, not the type claimed) or a note.
func TestHostileResources(t *testing.T) {
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return hostileServer() }, nil))
	t.Cleanup(srv.Close)
	s := start(t, []ServerConfig{{Name: "bad", Type: "http", URL: srv.URL}}, Options{})
	var uris []string
	for _, r := range listResources(t, s) {
		uris = append(uris, r.URI)
		if r.URI == "test://huge" {
			if r.Name != "huge second line" || len([]rune(r.Description)) != maxLabel+1 {
				t.Errorf("huge's name %q, description of %d runes: want it on one line, without escapes, cut", r.Name, len([]rune(r.Description)))
			}
		}
	}
	if got := strings.Join(uris, " "); got != "test://bin test://huge test://liar test://many test://png" {
		t.Errorf("listed %q: want the URIs with bidi overrides or spaces left out", got)
	}

	blocks, err := readResource(t, s, "bad", "test://huge")
	if err != nil || len(blocks) != 1 {
		t.Fatalf("huge: %d blocks, %v", len(blocks), err)
	}
	if n := len(blocks[0].Text); n > maxResourceText+100 || !strings.HasSuffix(blocks[0].Text, "[dsh: cut to 262144 of its 2097152 bytes]") {
		t.Errorf("huge is %d bytes, ending %q", n, blocks[0].Text[max(0, n-60):])
	}

	blocks, err = readResource(t, s, "bad", "test://many")
	total := 0
	for _, b := range blocks {
		total += len(b.Text)
	}
	if err != nil || len(blocks) != maxContents+1 || !strings.Contains(blocks[maxContents].Text, "980 more contents") || total > maxResourceText+1000 {
		t.Errorf("many: %d blocks, %d bytes, %v", len(blocks), total, err)
	}

	if blocks, err = readResource(t, s, "bad", "test://liar"); err != nil || len(blocks) != 1 || blocks[0].URI != "test://liar" {
		t.Errorf("liar: %+v, %v: want the asked URI in place of the unprintable one", blocks, err)
	}
	blocks, err = readResource(t, s, "bad", "test://png")
	if err != nil || len(blocks) != 1 || blocks[0].Type != card.ContentImage || blocks[0].MimeType != "image/png" || blocks[0].URI != "test://png" {
		t.Errorf("png: %+v, %v", blocks, err)
	} else if data, _ := base64.StdEncoding.DecodeString(blocks[0].Data); len(data) != len(pngMagic)+4 {
		t.Errorf("png data %d bytes", len(data))
	}
	if blocks, err = readResource(t, s, "bad", "test://bin"); err != nil || len(blocks) != 1 ||
		blocks[0].Text != "[dsh: binary content (application/octet-stream, 4 bytes) not attached]" {
		t.Errorf("bin: %+v, %v", blocks, err)
	}
	// The Go SDK answers a missing resource with invalid params saying so.
	if _, err := readResource(t, s, "bad", "test://none"); !errors.Is(err, ErrNoResource) {
		t.Errorf("a missing resource: %v", err)
	}
}

// A server without resources lists none and reads none.
func TestNoResources(t *testing.T) {
	s := start(t, []ServerConfig{stdioConfig(t, "plain")}, Options{})
	if rs := listResources(t, s); len(rs) != 0 {
		t.Errorf("listed %+v", rs)
	}
	if _, err := readResource(t, s, "plain", "test://x"); !errors.Is(err, ErrNoResource) {
		t.Errorf("read: %v", err)
	}
}
