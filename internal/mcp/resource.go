package mcp

// This file lists a server's resources and reads one, to be attached to a
// prompt. A server is not trusted to be polite: what it names is cleaned
// before anyone sees it, a URI that cannot be shown as it is is left out, and
// what a read returns is capped.

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-dev/dsh/internal/card"
)

// Bounds on what one server may hand over.
const (
	maxResources    = 500       // resources and templates listed per server
	maxURI          = 1024      // a longer URI is left out
	maxLabel        = 200       // a name or description is cut to this many runes
	maxResourceText = 256 << 10 // the text attached from one read, all contents together
	maxResourceBlob = 5 << 20   // an image attached from one read (what the providers take)
	maxContents     = 20        // contents of one read
)

// Resource is a resource a server offers, or with Template set a resource
// template (URI is then its URI template). Name and Description are cleaned
// for display; URI holds no space or control character.
type Resource struct {
	Server, URI, Name, Description, MIMEType string
	Size                                     int64
	Template                                 bool
}

// Resources lists every server's resources and then its templates, in server
// order. A server whose listing fails is left out, its error joined in err.
func (s *Servers) Resources(ctx context.Context) ([]Resource, error) {
	var out []Resource
	var errs []error
	for _, srv := range s.all() {
		rs, err := srv.resources(ctx)
		out = append(out, rs...)
		if err != nil {
			errs = append(errs, fmt.Errorf("MCP server %s, listing its resources: %w", srv.name, srv.conn().explain(err)))
		}
	}
	return out, errors.Join(errs...)
}

func (s *server) resources(ctx context.Context) ([]Resource, error) {
	c := s.conn()
	if !c.offersResources() {
		return nil, nil
	}
	rs, _, err := listPaged(ctx, maxResources, func(ctx context.Context, cursor string) ([]*sdk.Resource, string, error) {
		r, err := c.session.ListResources(ctx, &sdk.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return r.Resources, r.NextCursor, nil
	}, func(r *sdk.Resource) (bool, string) { return r != nil && printableURI(r.URI), "" })
	if err != nil {
		return nil, err
	}
	var out []Resource
	for _, r := range rs {
		out = append(out, Resource{Server: s.name, URI: r.URI, Name: Label(cmp.Or(r.Title, r.Name)),
			Description: Label(r.Description), MIMEType: Label(r.MIMEType), Size: max(r.Size, 0)})
	}
	// The resources still are when listing templates fails: a server may offer none.
	ts, _, _ := listPaged(ctx, maxResources, func(ctx context.Context, cursor string) ([]*sdk.ResourceTemplate, string, error) {
		r, err := c.session.ListResourceTemplates(ctx, &sdk.ListResourceTemplatesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return r.ResourceTemplates, r.NextCursor, nil
	}, func(t *sdk.ResourceTemplate) (bool, string) { return t != nil && printableURI(t.URITemplate), "" })
	for _, t := range ts {
		out = append(out, Resource{Server: s.name, URI: t.URITemplate, Name: Label(cmp.Or(t.Title, t.Name)),
			Description: Label(t.Description), MIMEType: Label(t.MIMEType), Template: true})
	}
	return out, nil
}

// offersResources says whether the server declared resources.
func (c *conn) offersResources() bool {
	ir := c.session.InitializeResult()
	return ir != nil && ir.Capabilities != nil && ir.Capabilities.Resources != nil
}

// ErrNoResource is ReadResource's error for a resource the server does not
// have.
var ErrNoResource = errors.New("no such resource")

// ReadResource reads the resource uri of server as blocks to attach: text as a
// resource block (cut to maxResourceText, with a note saying so), an image as
// an image block, and any other binary content as a resource block that says
// what it was.
func (s *Servers) ReadResource(ctx context.Context, server, uri string) ([]card.Content, error) {
	for _, srv := range s.all() {
		if srv.name == server {
			return srv.read(ctx, uri)
		}
	}
	return nil, fmt.Errorf("no MCP server %s in this session", server)
}

func (s *server) read(ctx context.Context, uri string) ([]card.Content, error) {
	s.mu.Lock()
	dead := s.dead
	s.mu.Unlock()
	if dead != nil {
		return nil, fmt.Errorf("MCP server %s is not running (%w)", s.name, dead)
	}
	c := s.conn()
	if !c.offersResources() {
		return nil, fmt.Errorf("MCP server %s: %w (it offers none)", s.name, ErrNoResource)
	}
	res, err := c.session.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		if isNotFound(err) {
			return nil, fmt.Errorf("MCP server %s: %w", s.name, ErrNoResource)
		}
		return nil, fmt.Errorf("MCP server %s, reading %s: %w", s.name, uri, c.explain(err))
	}
	var out []card.Content
	budget := maxResourceText
	for i, c := range res.Contents {
		if c == nil {
			continue
		}
		if i == maxContents {
			out = append(out, card.Resource(uri, fmt.Sprintf("[dsh: %d more contents of this resource left out]", len(res.Contents)-i)))
			break
		}
		// The server names what it returned; one that cannot be shown is
		// labelled with what was asked for.
		name := c.URI
		if !printableURI(name) {
			name = uri
		}
		blk := content(name, c, budget)
		budget -= len(blk.Text)
		out = append(out, blk)
	}
	if len(out) == 0 {
		out = append(out, card.Resource(uri, ""))
	}
	return out, nil
}

// isNotFound says whether a read failed because the resource is not there:
// JSON-RPC error -32002, or invalid params saying "not found" (what the
// current specification and the TypeScript servers send).
func isNotFound(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we) && (we.Code == -32002 || strings.Contains(strings.ToLower(we.Message), "not found"))
}

// content is one content of a read, within budget bytes of text.
func content(uri string, c *sdk.ResourceContents, budget int) card.Content {
	mime := Label(c.MIMEType)
	switch {
	case c.Blob == nil:
		return card.Resource(uri, capText(c.Text, budget))
	case isImage(c.Blob) && len(c.Blob) <= maxResourceBlob:
		img := card.Image(http.DetectContentType(c.Blob), base64.StdEncoding.EncodeToString(c.Blob))
		img.URI = uri
		return img
	case utf8.Valid(c.Blob) && textual(mime):
		return card.Resource(uri, capText(string(c.Blob), budget))
	}
	return card.Resource(uri, fmt.Sprintf("[dsh: binary content (%s, %d bytes) not attached]", cmp.Or(mime, "no type"), len(c.Blob)))
}

// isImage says whether data is an image the models take, by its bytes (not
// by the type a server claims).
func isImage(data []byte) bool {
	switch http.DetectContentType(data) {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return true
	}
	return false
}

// textual says whether a MIME type is text a model can read.
func textual(mime string) bool {
	return mime == "" || strings.HasPrefix(mime, "text/") || strings.HasSuffix(mime, "json") ||
		strings.HasSuffix(mime, "xml") || strings.HasSuffix(mime, "yaml")
}

// capText cuts text to budget bytes (at a rune boundary), with a note saying
// how much there was.
func capText(text string, budget int) string {
	text = strings.ToValidUTF8(text, "\uFFFD")
	if len(text) <= budget {
		return text
	}
	cut := max(budget, 0)
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + fmt.Sprintf("\n[dsh: cut to %d of its %d bytes]", cut, len(text))
}

// printableURI says whether uri can be shown and typed as it is: not empty,
// not too long, no space, control or formatting character (a bidi override
// that makes it read as another).
func printableURI(uri string) bool {
	if uri == "" || len(uri) > maxURI || !utf8.ValidString(uri) {
		return false
	}
	for _, r := range uri {
		if unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '"' {
			return false
		}
	}
	return true
}

// Label cleans a name a server gave for display on one line: escape
// sequences, control and formatting characters go (they would drive the
// terminal, or make the name read as another), runs of space become one, and
// it is cut to maxLabel runes.
func Label(s string) string {
	s = ansi.Strip(strings.ToValidUTF8(s, "\uFFFD"))
	var b strings.Builder
	n, space := 0, false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			continue
		}
		if n == maxLabel {
			b.WriteString("…")
			break
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}
