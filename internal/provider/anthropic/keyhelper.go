package anthropic

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// DefaultKeyHelperTTL is how long a key from Claude Code's apiKeyHelper is
// used before the helper is asked again, as there.
const DefaultKeyHelperTTL = 5 * time.Minute

// keyHelperWait bounds one run of the helper: a helper that hangs must not
// hang every request.
const keyHelperWait = time.Minute

// keyHelperOutput bounds what a helper's output is read of.
const keyHelperOutput = 64 << 10

// keyHelper is Claude Code's apiKeyHelper: a command, run by /bin/sh, whose
// output is the credential, sent both as X-Api-Key and as Authorization:
// Bearer (a gateway takes one or the other). Its value is used for ttl, and
// asked for again, once, when Anthropic answers 401 with it: keys from a
// helper are short-lived.
type keyHelper struct {
	command string
	ttl     time.Duration
	now     func() time.Time

	mu    sync.Mutex // held while the helper runs: one run for concurrent requests
	value string
	at    time.Time
}

func newKeyHelper(command string, ttl time.Duration) *keyHelper {
	if ttl <= 0 {
		ttl = DefaultKeyHelperTTL
	}
	return &keyHelper{command: command, ttl: ttl, now: time.Now}
}

// key is the helper's value, run again if it is older than ttl or is stale.
func (h *keyHelper) key(ctx context.Context, stale string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.value != "" && h.value != stale && h.now().Sub(h.at) < h.ttl {
		return h.value, nil
	}
	v, err := runHelper(ctx, "apiKeyHelper", h.command)
	if err != nil {
		return "", err
	}
	if v == "" || strings.ContainsAny(v, "\r\n") {
		return "", &authError{fmt.Sprintf("Claude Code's apiKeyHelper (%s) printed no key: it should print the key alone, on one line", h.command)}
	}
	h.value, h.at = v, h.now()
	return v, nil
}

// runHelper runs one of Claude Code's credential helpers (setting names it)
// by /bin/sh and returns its output, trimmed; a failure is the user's to
// mend, in their words, with the helper's last line of stderr.
func runHelper(parent context.Context, setting, command string) (string, error) {
	ctx, cancel := context.WithTimeout(parent, keyHelperWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	out, errs := &capped{max: keyHelperOutput}, &capped{max: keyHelperOutput}
	cmd.Stdout, cmd.Stderr = out, errs
	cmd.WaitDelay = time.Second // a child it left holding the output must not hold the request
	err := cmd.Run()
	switch {
	case err == nil:
	case parent.Err() != nil:
		return "", parent.Err() // the request was cancelled: nothing to mend
	case ctx.Err() != nil:
		err = fmt.Errorf("it did not finish within %v", keyHelperWait)
	}
	if err != nil {
		if last := lastLine(errs.String()); last != "" {
			err = fmt.Errorf("%w: %s", err, last)
		}
		return "", &authError{fmt.Sprintf("Claude Code's %s (%s) failed: %v", setting, command, err)}
	}
	return strings.TrimSpace(out.String()), nil
}

// middleware sets each request's credential from the helper, and resends a
// request refused with 401 once with the helper's next value.
func (h *keyHelper) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	v, err := h.key(req.Context(), "")
	if err != nil {
		return nil, err
	}
	setKey(req, v)
	resp, err := next(req)
	if err != nil || resp.StatusCode != http.StatusUnauthorized || req.GetBody == nil {
		return resp, err
	}
	fresh, err := h.key(req.Context(), v)
	if err != nil {
		_ = resp.Body.Close() // the helper's failure is what to mend
		return nil, err
	}
	if fresh == v {
		return resp, nil // the 401 says it: the key is refused
	}
	body, err := req.GetBody()
	if err != nil {
		return resp, nil
	}
	_ = resp.Body.Close() // a 401's body: nothing in it is kept
	again := req.Clone(req.Context())
	again.Body = body
	setKey(again, fresh)
	return next(again)
}

func setKey(req *http.Request, v string) {
	req.Header.Set("X-Api-Key", v)
	req.Header.Set("Authorization", "Bearer "+v)
}

// capped is a buffer that keeps its first max bytes.
type capped struct {
	bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// lastLine is the last non-empty line of s, trimmed.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
