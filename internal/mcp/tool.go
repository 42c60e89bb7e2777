package mcp

// This file adapts a server's tools to dsh tools with runtime schemas.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// MaxNameLen is the longest tool name both providers accept.
const MaxNameLen = 64

var unsafeChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-zA-Z0-9_-]`) })

// ToolName is the dsh name of a server's tool: mcp__<server>__<tool> with
// every character outside [a-zA-Z0-9_-] replaced by _, cut to MaxNameLen with
// a hash of the full name so that cut names stay distinct.
func ToolName(server, name string) string {
	n := "mcp__" + unsafeChars().ReplaceAllString(server, "_") + "__" + unsafeChars().ReplaceAllString(name, "_")
	if len(n) <= MaxNameLen {
		return n
	}
	return n[:MaxNameLen-9] + "_" + shortHash(server+"\x00"+name)
}

func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:4])
}

// adapt turns the server's tools into dsh tools. A name already in seen (two
// tools, of this server or an earlier one, that sanitise alike) gets the hash
// suffix, so neither shadows the other; a tool whose name still collides is
// left out rather than crash the registry.
func (s *server) adapt(seen map[string]bool) []tool.Tool {
	s.mu.Lock()
	tools := s.tools // replaced whole on a new listing, never changed in place
	s.mu.Unlock()
	var out []tool.Tool
	for _, t := range tools {
		name := ToolName(s.name, t.Name)
		if seen[name] {
			name = name[:min(len(name), MaxNameLen-9)] + "_" + shortHash(s.name+"\x00"+t.Name)
		}
		if seen[name] {
			continue
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
		// A tool the server says only reads runs unasked, if the user trusts the
		// server; any other acts on the world the way a command does (a hostile
		// server's "wipe" claims to read only).
		readOnly := s.trusted && t.Annotations != nil && t.Annotations.ReadOnlyHint
		perm := tool.PermExecute
		if readOnly {
			perm = tool.PermNone
		}
		remote := t.Name
		d := tool.Dynamic{
			Name: name, Title: s.name + ": " + title,
			Description: desc + "\n\n(A tool of the MCP server " + s.name + ".)",
			Schema:      objectSchema(t.InputSchema),
			ReadOnly:    readOnly, Permission: perm, Kind: card.ToolOther,
			Execute: func(ctx context.Context, env tool.Env, args jsontext.Value) (tool.Result, error) {
				id, end := s.calls.enter(ctx, env)
				defer end()
				return s.call(ctx, remote, json.RawMessage(args), id), nil
			},
		}
		dt, err := tool.NewDynamic(d)
		if err != nil {
			// A schema dsh cannot compile: the server still checks the arguments.
			d.Schema = jsontext.Value(`{"type":"object"}`)
			if dt, err = tool.NewDynamic(d); err != nil {
				continue
			}
		}
		out = append(out, dt)
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
