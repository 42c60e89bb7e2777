package mcp

// This file adapts a server's tools to the tool.Tool interface; it becomes a
// call of tool.NewDynamic once package tool has that constructor.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// MaxNameLen is the longest tool name both providers accept.
const MaxNameLen = 64

var unsafeChars = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// ToolName is the dsh name of a server's tool: mcp__<server>__<tool> with
// every character outside [a-zA-Z0-9_-] replaced by _, cut to MaxNameLen with
// a hash of the full name so that cut names stay distinct.
func ToolName(server, name string) string {
	n := "mcp__" + unsafeChars.ReplaceAllString(server, "_") + "__" + unsafeChars.ReplaceAllString(name, "_")
	if len(n) <= MaxNameLen {
		return n
	}
	return n[:MaxNameLen-9] + "_" + shortHash(server+"\x00"+name)
}

func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:4])
}

// mcpTool is one server tool as a dsh tool.
type mcpTool struct {
	srv         *server
	name        string // dsh's
	remote      string // the server's
	title       string
	description string
	schema      jsontext.Value
	readOnly    bool
}

// adapt turns the server's tools into dsh tools. Two tools whose names
// sanitise alike get the hash suffix, so neither shadows the other.
func (s *server) adapt() []tool.Tool {
	seen := map[string]bool{}
	var out []tool.Tool
	for _, t := range s.tools {
		name := ToolName(s.name, t.Name)
		if seen[name] {
			name = name[:min(len(name), MaxNameLen-9)] + "_" + shortHash(s.name+"\x00"+t.Name)
		}
		seen[name] = true
		title := t.Title
		if title == "" && t.Annotations != nil {
			title = t.Annotations.Title
		}
		if title == "" {
			title = t.Name
		}
		desc := t.Description
		if desc == "" {
			desc = title
		}
		out = append(out, &mcpTool{
			srv: s, name: name, remote: t.Name, title: s.name + ": " + title,
			description: desc + "\n\n(A tool of the MCP server " + s.name + ".)",
			schema:      objectSchema(t.InputSchema),
			readOnly:    t.Annotations != nil && t.Annotations.ReadOnlyHint,
		})
	}
	return out
}

// objectSchema returns the server's input schema as JSON, an object schema
// with no properties when the server gave none or something unusable.
func objectSchema(s any) jsontext.Value {
	const empty = `{"type":"object","properties":{}}`
	b, err := json.Marshal(s)
	if err != nil || s == nil {
		return jsontext.Value(empty)
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil || m == nil {
		return jsontext.Value(empty)
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
		if b, err = json.Marshal(m); err != nil {
			return jsontext.Value(empty)
		}
	}
	return jsontext.Value(b)
}

func (t *mcpTool) Name() string           { return t.name }
func (t *mcpTool) Description() string    { return t.description }
func (t *mcpTool) Schema() jsontext.Value { return t.schema }
func (t *mcpTool) ReadOnly() bool         { return t.readOnly }
func (t *mcpTool) Kind() string           { return "other" }

// Permission: a tool the server says only reads runs unasked; any other acts
// on the world the way a command does.
func (t *mcpTool) Permission() tool.Permission {
	if t.readOnly {
		return tool.PermNone
	}
	return tool.PermExecute
}

func (t *mcpTool) Run(ctx context.Context, _ tool.Env, args []byte) tool.Result {
	if strings.TrimSpace(string(args)) == "" {
		args = []byte("{}")
	}
	var obj map[string]any
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return tool.Errorf("Invalid arguments for %s: want a JSON object", t.name)
	}
	return t.srv.call(ctx, t.remote, json.RawMessage(args))
}

func (t *mcpTool) PresentCall(args []byte) card.Call {
	c := &card.GenericCall{Title: t.title, ToolKind: "other"}
	if v := jsontext.Value(args); v.IsValid() {
		c.RawInput = v.Clone()
	}
	return c
}

func (t *mcpTool) PresentResult(_ []byte, r tool.Result) card.Result {
	if r.IsError {
		return nil
	}
	return &card.GenericResult{Title: t.title, Content: r.Content}
}
