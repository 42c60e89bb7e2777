// Package fetch is the web_fetch tool: one http(s) page, with its size, time
// and redirects bounded, HTML turned into Markdown.
package fetch

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"golang.org/x/net/html/charset"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/netproxy"
	"github.com/dsh-dev/dsh/internal/tool"
)

var (
	//go:embed fetch.md
	description string
	//go:embed guidance.md
	guidance string
)

// The defaults of Options.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultMaxBytes     = 5 << 20 // of the body as sent
	DefaultMaxRedirects = 5
	DefaultMaxChars     = 100_000 // of the text returned
)

// Options bound a fetch; zero values take the defaults.
type Options struct {
	Timeout      time.Duration // the whole fetch, body included
	MaxBytes     int64
	MaxRedirects int
	MaxChars     int
	// Transport, if set, replaces the default one (which honours the proxy
	// environment variables).
	Transport http.RoundTripper
	// Network, if set, is the rules sandboxed commands reach the network by:
	// a host they refuse is refused before anyone is asked, and the fetch
	// resolves and connects as the commands' proxy does.
	Network *netproxy.Proxy
	// Offline, if set, refuses every fetch before anyone is asked, saying why:
	// a session whose commands may not reach the network must not reach it
	// through web_fetch either.
	Offline string
}

// Params are web_fetch's arguments.
type Params struct {
	URL    string `json:"url" jsonschema:"minLength=1" jsonschema_description:"The page to fetch: a complete http:// or https:// URL."`
	Prompt string `json:"prompt,omitempty" jsonschema_description:"What you are looking for on the page."`
}

// Meta is logged with the call (the checked URL) and the result (what was fetched).
type Meta struct {
	URL         string `json:"url"`                   // the page in the end, after redirects
	Status      int    `json:"status,omitzero"`       // its HTTP status
	ContentType string `json:"contentType,omitempty"` // its media type
	Truncated   bool   `json:"truncated,omitzero"`    // the body or the text was cut
}

// Tool returns web_fetch with the default bounds.
func Tool() tool.Tool { return New(Options{}) }

// New returns web_fetch with o's bounds.
func New(o Options) tool.Tool {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	if o.MaxChars <= 0 {
		o.MaxChars = DefaultMaxChars
	}
	if o.Transport == nil && o.Network != nil {
		o.Transport = o.Network.Transport()
	}
	if o.Transport == nil {
		o.Transport = http.DefaultTransport
	}
	f := &fetcher{o: o}
	return tool.New(tool.Spec[Params, Meta]{
		Name:         "web_fetch",
		Hook:         hookCall,
		Unhook:       unhook,
		HookResponse: hookResult,
		Description:  description,
		Guidance:     guidance,
		ReadOnly:     true, // of the workspace: fetches run concurrently
		Permission:   tool.PermExecute,
		Kind:         card.ToolFetch,
		Approval:     approval,
		Preview: func(_ context.Context, _ tool.Env, p Params) (*Meta, error) {
			if o.Offline != "" {
				return nil, errors.New(o.Offline)
			}
			m, err := preview(p)
			if err == nil && o.Network != nil {
				u, _ := url.Parse(m.URL)
				err = o.Network.Rules().Check(u.Hostname())
			}
			return m, err
		},
		Execute:       f.execute,
		PresentCall:   presentCall,
		PresentResult: presentResult,
	})
}

// check parses a URL the tool may fetch: http or https, with a host and no
// credentials.
func check(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL: %w", raw, err)
	}
	switch u.Scheme {
	case "http", "https":
	default:
		return nil, fmt.Errorf("only http and https URLs are fetched, not %q", raw)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("%q has no host", raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%q holds credentials, which web_fetch does not send", u.Redacted())
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

// hostKey is the host as approvals remember it: lower case, without the
// scheme's default port.
func hostKey(u *url.URL) string {
	h, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" || u.Scheme == "http" && port == "80" || u.Scheme == "https" && port == "443" {
		return h
	}
	return net.JoinHostPort(h, port)
}

func approval(p Params) tool.Approval {
	u, err := check(p.URL)
	if err != nil {
		return tool.Approval{}
	}
	h := hostKey(u)
	return tool.Approval{Keys: []string{"fetch:" + h}, Label: "fetching from " + h, Remember: true, ReadsOnly: true}
}

// preview refuses a URL the tool will not fetch before anyone is asked.
func preview(p Params) (*Meta, error) {
	u, err := check(p.URL)
	if err != nil {
		return nil, err
	}
	return &Meta{URL: u.String()}, nil
}

type fetcher struct{ o Options }

func (f *fetcher) execute(ctx context.Context, _ tool.Env, p Params, _ *Meta) (tool.Result, *Meta, error) {
	u, err := check(p.URL)
	if err != nil {
		return tool.Errorf("%v.", err), nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, f.o.Timeout)
	defer cancel()
	// A redirect to another host is not followed: it needs its own call, and
	// the user's permission for that host.
	var moved *url.URL
	client := &http.Client{Transport: f.o.Transport, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) > f.o.MaxRedirects {
			return fmt.Errorf("stopped after %d redirects", f.o.MaxRedirects)
		}
		next, err := check(req.URL.String())
		if err != nil {
			return fmt.Errorf("refused a redirect: %w", err)
		}
		if hostKey(next) != hostKey(u) {
			moved = next
			return http.ErrUseLastResponse
		}
		return nil
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return tool.Errorf("Cannot fetch %s: %v.", u, err), nil, nil
	}
	req.Header.Set("User-Agent", "dsh (web_fetch)")
	req.Header.Set("Accept", "text/markdown, text/html;q=0.9, text/plain;q=0.8, */*;q=0.1")
	resp, err := client.Do(req)
	if err != nil {
		return tool.Errorf("Cannot fetch %s: %v.", u, f.explain(ctx, err)), nil, nil
	}
	defer func() { _ = resp.Body.Close() }()
	meta := &Meta{URL: resp.Request.URL.String(), Status: resp.StatusCode}
	if moved != nil {
		return tool.Text(fmt.Sprintf("%s redirects to another host: %s\nIt was not followed. To read it, fetch that URL with another call.", meta.URL, moved)), meta, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.o.MaxBytes+1))
	if err != nil {
		return tool.Errorf("Cannot fetch %s: reading the page: %v.", meta.URL, f.explain(ctx, err)), nil, nil
	}
	if int64(len(body)) > f.o.MaxBytes {
		body, meta.Truncated = body[:f.o.MaxBytes], true
	}
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		ct = http.DetectContentType(body)
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt = "application/octet-stream"
	}
	meta.ContentType = mt
	text, err := toText(ctx, mt, ct, body, meta.URL)
	if err != nil {
		return tool.Errorf("Cannot fetch %s: %v.", meta.URL, err), meta, nil
	}
	if n := utf8.RuneCountInString(text); n > f.o.MaxChars {
		text, meta.Truncated = string([]rune(text)[:f.o.MaxChars]), true
	}
	head := fmt.Sprintf("%s (HTTP %d, %s)", meta.URL, resp.StatusCode, mt)
	if p.Prompt != "" {
		head += "\nLooking for: " + p.Prompt
	}
	if meta.Truncated {
		head += fmt.Sprintf("\nThe page was cut: at most %d bytes are read and %d characters returned.", f.o.MaxBytes, f.o.MaxChars)
	}
	r := tool.Result{Content: []card.Content{card.Text(head + "\n\n"), card.Text(text)}}
	if resp.StatusCode >= 400 {
		r.IsError = true
	}
	return r, meta, nil
}

// explain turns the client's error for a fetch past its time into one that says so.
func (f *fetcher) explain(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("it took longer than %v", f.o.Timeout)
	}
	if r, ok := errors.AsType[*netproxy.Refused](err); ok {
		return r // not wrapped in the request's words: the rule is the news
	}
	return err
}

// toText is the body as text: Markdown for HTML, as it is for other text
// types, decoded from its charset; binary types are refused.
func toText(ctx context.Context, mt, ct string, body []byte, page string) (string, error) {
	isHTML := mt == "text/html" || mt == "application/xhtml+xml"
	if !isHTML && !isText(mt) {
		return "", fmt.Errorf("it is %s, not text", mt)
	}
	r, err := charset.NewReader(bytes.NewReader(body), ct)
	if err != nil {
		return "", fmt.Errorf("decoding its charset: %w", err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return "", fmt.Errorf("decoding its charset: %w", err)
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if !isHTML {
		return s, nil
	}
	md, err := htmltomarkdown.ConvertString(s, converter.WithContext(ctx), converter.WithDomain(page))
	if err != nil {
		return "", fmt.Errorf("converting its HTML: %w", err)
	}
	return md, nil
}

func isText(mt string) bool {
	if strings.HasPrefix(mt, "text/") || strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml") {
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/javascript", "application/x-javascript",
		"application/yaml", "application/x-yaml", "application/toml", "application/x-sh":
		return true
	}
	return false
}
