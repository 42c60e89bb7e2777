package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
)

// promptPreamble tells the model how a prompt hook's question is answered:
// Claude Code's {"ok": …} verdict.
const promptPreamble = `You are a check that a coding agent's hook runs. Read the question and the event's JSON input below, ` +
	`and answer with one JSON object and nothing else: {"ok": true} when it may proceed, or {"ok": false, "reason": "…"} when ` +
	`it may not, the reason saying what to do instead.

`

// prompt runs a prompt hook: its prompt, $ARGUMENTS replaced by the input (or
// the input appended when it has none), is asked of the session's model, and
// its verdict decides as a command's JSON would: ok false blocks (denies a
// call, keeps a turn going, blocks a prompt) with its reason.
func (r *Runner) prompt(ctx context.Context, h compiled, stdinJSON []byte, ask Ask) result {
	if ask == nil {
		return result{code: -1, err: "no model to ask"}
	}
	q := h.Prompt
	if strings.Contains(q, "$ARGUMENTS") {
		q = strings.ReplaceAll(q, "$ARGUMENTS", string(stdinJSON))
	} else {
		q += "\n\n" + string(stdinJSON)
	}
	timeout := h.timeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	answer, err := ask(ctx, promptPreamble+q)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return result{code: -1, err: fmt.Sprintf("timed out after %s", timeout)}
	case ctx.Err() != nil:
		return result{code: -1, err: "cancelled"}
	case err != nil:
		return result{code: -1, err: "asking the model: " + err.Error()}
	}
	v, ok := verdict(answer)
	if !ok {
		return result{code: -1, stdout: answer, err: `the model did not answer with {"ok": …}`}
	}
	return result{stdout: v}
}

// verdict reads the model's answer to a prompt hook as a command hook's
// stdout: {"ok": false, "reason"} is a block; {"ok": true} decides nothing;
// an answer in the hooks' own output format (decision, …) is taken as is.
func verdict(answer string) (string, bool) {
	i, j := strings.Index(answer, "{"), strings.LastIndex(answer, "}")
	if i < 0 || j < i {
		return "", false
	}
	obj := answer[i : j+1]
	var v struct {
		OK       *bool  `json:"ok"`
		Reason   string `json:"reason"`
		Decision string `json:"decision"`
	}
	if json.Unmarshal([]byte(obj), &v) != nil {
		return "", false
	}
	switch {
	case v.OK != nil && *v.OK:
		return "", true
	case v.OK != nil:
		b, err := json.Marshal(struct {
			Decision string `json:"decision"`
			Reason   string `json:"reason"`
		}{"block", v.Reason})
		return string(b), err == nil
	case v.Decision != "":
		return obj, true
	}
	return "", false
}

// noRedirects keeps an http hook's POST where its URL says: a redirect is an
// answer that is not 2xx.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// post runs an http hook: the input is POSTed to its URL; a 2xx answer's body
// is read as a command's stdout, anything else is an error that decides
// nothing.
func (r *Runner) post(ctx context.Context, h compiled, body []byte) result {
	timeout := h.timeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		return result{code: -1, err: "could not POST: " + err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h.Headers {
		req.Header.Set(k, expand(v, h.AllowedEnvVars, append(slices.Clip(r.env), h.Env...)))
	}
	resp, err := noRedirects.Do(req)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return result{code: -1, err: fmt.Sprintf("timed out after %s", timeout)}
	case err != nil:
		return result{code: -1, err: "could not POST: " + err.Error()}
	}
	defer func() { _ = resp.Body.Close() }()
	text := readCapped(resp.Body)
	if resp.StatusCode/100 != 2 {
		return result{code: -1, stderr: text, err: "answered " + resp.Status}
	}
	return result{stdout: text}
}

// expand replaces $VAR and ${VAR} in an http hook's header: with the
// variable's value in env (the hooks' environment) when allowed names it,
// else with nothing, as Claude Code does.
func expand(v string, allowed, env []string) string {
	return os.Expand(v, func(name string) string {
		if !slices.Contains(allowed, name) {
			return ""
		}
		for _, kv := range slices.Backward(env) {
			if k, val, _ := strings.Cut(kv, "="); k == name {
				return val
			}
		}
		return ""
	})
}
