package mcp

// This file answers a server's elicitation (elicitation/create): the server
// asks the user for input while one of its tools runs. The request becomes
// the running call's question, shown by every consumer as a question card;
// the answer goes back as the specification has it (accept with the values,
// the schema's defaults applied; decline; cancel when the user dismissed it)
// and is logged with the call.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// The answers an elicitation gets (the specification's actions).
const (
	elicitAccept  = "accept"
	elicitDecline = "decline"
	elicitCancel  = "cancel"
)

// maxElicitText bounds what of a server's question is shown.
const maxElicitText = 4 << 10

// calls are the calls running on a server, for a request the server makes
// while they run.
type calls struct {
	mu  sync.Mutex
	n   int
	env map[int]callEnv
}

type callEnv struct {
	ctx context.Context
	env tool.Env
}

// enter notes a running call: its id, and the func that ends it.
func (c *calls) enter(ctx context.Context, env tool.Env) (int, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.env == nil {
		c.env = map[int]callEnv{}
	}
	c.n++
	id := c.n
	c.env[id] = callEnv{ctx, env}
	return id, func() {
		c.mu.Lock()
		delete(c.env, id)
		c.mu.Unlock()
	}
}

// get is the running call id.
func (c *calls) get(id int) (callEnv, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.env[id]
	return e, ok
}

// progressToken names a call in its progress notifications.
func progressToken(id int) string { return "dsh-" + strconv.Itoa(id) }

// progress shows a server's progress notification on its call's card.
func (s *server) progress(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
	tok, _ := r.Params.ProgressToken.(string)
	n, err := strconv.Atoi(strings.TrimPrefix(tok, "dsh-"))
	if err != nil || !strings.HasPrefix(tok, "dsh-") {
		return
	}
	e, ok := s.calls.get(n)
	if !ok {
		return
	}
	line := strconv.FormatFloat(r.Params.Progress, 'f', -1, 64)
	if r.Params.Total > 0 {
		line += "/" + strconv.FormatFloat(r.Params.Total, 'f', -1, 64)
	}
	if m := truncate(sanitise(r.Params.Message), 200); m != "" {
		line += " " + m
	}
	e.env.Emit("[progress " + line + "]\n")
}

// asker is the latest running call that can ask the user.
func (c *calls) asker() (callEnv, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	best := 0
	for id, e := range c.env {
		if e.env.Ask != nil && id > best {
			best = id
		}
	}
	e, ok := c.env[best]
	return e, ok
}

// elicit puts the server's request to the user through a running call.
func (s *server) elicit(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	p := req.Params
	running, ok := s.calls.asker()
	if !ok {
		// No call of the server's runs, or no one can be asked: the server
		// gets a refusal rather than a wait on nobody.
		return &sdk.ElicitResult{Action: elicitDecline}, nil
	}
	q, props := s.question(p)
	a, err := running.env.Ask(running.ctx, q)
	res := &sdk.ElicitResult{Action: elicitCancel}
	switch {
	case err != nil || a.None():
	case a.ID == elicitDecline:
		res.Action = elicitDecline
	case a.ID == elicitAccept && p.Mode == "url":
		res.Action = elicitAccept // a URL's answer carries no content
	case a.ID == elicitAccept:
		res.Action, res.Content = elicitAccept, map[string]any{} // the client applies the defaults
	case p.Mode != "url":
		content, perr := parseValues(a.Text, props)
		if perr != nil {
			running.env.Emit(fmt.Sprintf("[%s asked: %s — the answer did not fit (%v), so it was cancelled]\n", s.name,
				truncate(sanitise(p.Message), 200), perr))
			return res, nil
		}
		res.Action, res.Content = elicitAccept, content
	}
	answer := res.Action
	if len(res.Content) > 0 {
		b, _ := json.Marshal(res.Content)
		answer += " " + string(b)
	}
	running.env.Emit(fmt.Sprintf("[%s asked: %s — answer: %s]\n", s.name, truncate(sanitise(p.Message), 200), truncate(answer, 1000)))
	return res, nil
}

// prop is one field of a form.
type prop struct {
	name, typ, about string
	def              any
	enum             []string
	required         bool
}

// question is what the user is asked, and the form's fields.
func (s *server) question(p *sdk.ElicitParams) (tool.Question, []prop) {
	msg := truncate(sanitise(p.Message), maxElicitText)
	if p.Mode == "url" {
		return tool.Question{
			Text: fmt.Sprintf("MCP server %s asks you to open %s\n\n%s", s.name, truncate(sanitise(p.URL), 2048), msg),
			Choices: []card.Choice{
				{ID: elicitAccept, Label: "Done", Description: "I opened it and did what it asks"},
				{ID: elicitDecline, Label: "Decline", Description: "do not open it"},
			},
		}, nil
	}
	props := formProps(p.RequestedSchema)
	var b strings.Builder
	fmt.Fprintf(&b, "MCP server %s asks: %s", s.name, msg)
	if len(props) > 0 {
		b.WriteString("\n")
		for _, f := range props {
			fmt.Fprintf(&b, "\n- %s (%s", f.name, f.typ)
			if len(f.enum) > 0 {
				fmt.Fprintf(&b, ": %s", strings.Join(f.enum, ", "))
			}
			if f.required {
				b.WriteString(", required")
			}
			if f.def != nil {
				fmt.Fprintf(&b, ", default %v", f.def)
			}
			b.WriteString(")")
			if f.about != "" {
				b.WriteString(" " + f.about)
			}
		}
		if len(props) == 1 {
			b.WriteString("\n\nAnswer with the value, or accept the default.")
		} else {
			b.WriteString("\n\nAnswer with NAME=VALUE lines (or a JSON object); what you leave out takes its default.")
		}
	}
	return tool.Question{Text: b.String(), FreeText: len(props) > 0, Choices: []card.Choice{
		{ID: elicitAccept, Label: "Accept", Description: "send the defaults"},
		{ID: elicitDecline, Label: "Decline", Description: "send nothing"},
	}}, props
}

// maxFormProps bounds the fields of a form that are shown.
const maxFormProps = 32

// formProps reads the form's fields from the requested schema (flat, of
// primitive types, as the specification has it), in name order.
func formProps(schema any) []prop {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil
	}
	var s struct {
		Properties map[string]struct {
			Type        string   `json:"type"`
			Title       string   `json:"title"`
			Description string   `json:"description"`
			Default     any      `json:"default"`
			Enum        []string `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(b, &s) != nil {
		return nil
	}
	var out []prop
	for name, p := range s.Properties {
		out = append(out, prop{name: truncate(sanitise(name), 64), typ: truncate(sanitise(p.Type), 16),
			about: truncate(sanitise(strings.TrimSpace(p.Title+" "+p.Description)), 200), def: p.Default,
			enum: p.Enum, required: slices.Contains(s.Required, name)})
	}
	slices.SortFunc(out, func(a, b prop) int { return strings.Compare(a.name, b.name) })
	if len(out) > maxFormProps {
		out = out[:maxFormProps]
	}
	for i := range out {
		for j, e := range out[i].enum {
			out[i].enum[j] = truncate(sanitise(e), 64)
		}
	}
	return out
}

// parseValues reads the user's answer to a form: the value of its one field,
// a JSON object, or NAME=VALUE lines; each value is read as its field's type.
func parseValues(text string, props []prop) (map[string]any, error) {
	text = strings.TrimSpace(text)
	raw := map[string]string{}
	var obj map[string]any
	switch {
	case strings.HasPrefix(text, "{") && json.Unmarshal([]byte(text), &obj) == nil:
		return obj, nil
	case len(props) == 1 && !strings.HasPrefix(text, props[0].name+"="):
		raw[props[0].name] = text
	default:
		for _, line := range strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == ',' || r == ';' }) {
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				return nil, fmt.Errorf("%q is not NAME=VALUE", strings.TrimSpace(line))
			}
			raw[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	out := map[string]any{}
	for k, v := range raw {
		i := slices.IndexFunc(props, func(p prop) bool { return p.name == k })
		if i < 0 {
			return nil, fmt.Errorf("the form has no field %s", k)
		}
		var err error
		switch props[i].typ {
		case "integer":
			out[k], err = strconv.ParseInt(v, 10, 64)
		case "number":
			out[k], err = strconv.ParseFloat(v, 64)
		case "boolean":
			switch strings.ToLower(v) {
			case "yes", "y", "on":
				v = "true"
			case "no", "n", "off":
				v = "false"
			}
			out[k], err = strconv.ParseBool(v)
		default:
			out[k] = v
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not of type %s", k, v, props[i].typ)
		}
	}
	return out, nil
}
