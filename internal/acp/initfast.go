package acp

import (
	"slices"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	sdk "github.com/coder/acp-go-sdk"
)

// initializeFast answers initialize as Initialize does, in the bytes the SDK
// would write, without the SDK: its decoding of the request and encoding of
// the response reflect on every type under them, which cost a fresh dsh acp
// a tenth of its start before it could answer. ok is false for a request it
// does not know the shape of, which goes to the SDK and Initialize.
func (a *Agent) initializeFast(params jsontext.Value) (result []byte, ok bool) {
	caps, ok := clientCaps(params)
	if !ok {
		return nil, false
	}
	methods := []any{
		keyMethod(authAnthropic, "Anthropic API key", "ANTHROPIC_API_KEY", "https://console.anthropic.com/settings/keys"),
		keyMethod(authOpenAI, "OpenAI API key", "OPENAI_API_KEY", "https://platform.openai.com/api-keys"),
	}
	if caps.authTerminal {
		methods = append(methods, map[string]any{"id": authLogin, "name": "Sign in with dsh login", "type": "terminal",
			"args": []any{"login"}, "description": "Type an API key; dsh keeps it for every session."})
	} else {
		methods = append(methods, map[string]any{"id": authLogin, "name": "API key", "description": loginHelp})
	}
	empty := map[string]any{}
	res := map[string]any{
		"protocolVersion": sdk.ProtocolVersionNumber,
		"agentCapabilities": map[string]any{
			"auth":               map[string]any{"logout": empty},
			"loadSession":        true,
			"mcpCapabilities":    map[string]any{"http": true, "sse": true},
			"promptCapabilities": map[string]any{"embeddedContext": true, "image": true},
			"sessionCapabilities": map[string]any{"additionalDirectories": empty, "close": empty, "delete": empty,
				"fork": empty, "list": empty, "resume": empty},
		},
		"agentInfo":   map[string]any{"name": "dsh", "title": "dsh", "version": a.o.Version},
		"authMethods": methods,
	}
	// As encoding/json writes them: sorted keys, HTML and JavaScript escapes.
	b, err := json.Marshal(res, json.Deterministic(true), jsontext.EscapeForHTML(true), jsontext.EscapeForJS(true))
	if err != nil {
		return nil, false
	}
	a.mu.Lock()
	a.termMeta = caps.termMeta
	a.fs = sdk.FileSystemCapabilities{ReadTextFile: caps.readFiles, WriteTextFile: caps.writeFiles}
	a.form = caps.form
	a.mu.Unlock()
	return b, true
}

func keyMethod(id, name, v, link string) map[string]any {
	return map[string]any{"id": id, "name": name, "description": "Start dsh with " + v + " set (a key from " + link + ")."}
}

// initCaps is what dsh takes from a client's capabilities.
type initCaps struct {
	termMeta, readFiles, writeFiles, authTerminal, form bool
}

// clientCaps reads initialize's params when they have only the members and
// types the SDK decodes them from without complaint; ok is false otherwise.
func clientCaps(params jsontext.Value) (c initCaps, ok bool) {
	var p map[string]any
	if json.Unmarshal(params, &p) != nil {
		return c, false
	}
	for k, v := range p {
		switch k {
		case "protocolVersion":
			if n, isNum := v.(float64); !isNum || n != float64(int(n)) || n < 0 || n > 65535 {
				return c, false
			}
		case "clientInfo":
			if !stringMembers(v, "name", "title", "version") {
				return c, false
			}
		case "clientCapabilities", "_meta":
		default:
			return c, false
		}
	}
	if _, ok := p["protocolVersion"]; !ok {
		return c, false
	}
	cc, present := p["clientCapabilities"]
	if !present {
		return c, true
	}
	m, isObj := cc.(map[string]any)
	if !isObj {
		return c, false
	}
	for k, v := range m {
		switch k {
		case "fs":
			fs, ok := boolMembers(v, "readTextFile", "writeTextFile")
			if !ok {
				return c, false
			}
			c.readFiles, c.writeFiles = fs["readTextFile"], fs["writeTextFile"]
		case "terminal":
			if _, ok := v.(bool); !ok {
				return c, false
			}
		case "auth":
			auth, ok := boolMembers(v, "terminal")
			if !ok {
				return c, false
			}
			c.authTerminal = auth["terminal"]
		case "elicitation":
			e, ok := v.(map[string]any)
			if !ok {
				return c, false
			}
			for k, v := range e {
				if _, obj := v.(map[string]any); (k != "form" && k != "url") || !obj {
					return c, false
				}
			}
			_, c.form = e["form"]
		case "_meta":
			meta, ok := v.(map[string]any)
			if !ok {
				return c, false
			}
			c.termMeta, _ = meta["terminal_output"].(bool)
		default:
			return c, false
		}
	}
	return c, true
}

// boolMembers reads an object of only the boolean members names.
func boolMembers(v any, names ...string) (map[string]bool, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	out := map[string]bool{}
	for k, v := range m {
		b, isBool := v.(bool)
		if !isBool || !slices.Contains(names, k) {
			return nil, false
		}
		out[k] = b
	}
	return out, true
}

// stringMembers reports whether v is an object of only the string members names.
func stringMembers(v any, names ...string) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for k, v := range m {
		if _, isStr := v.(string); !isStr || !slices.Contains(names, k) {
			return false
		}
	}
	return true
}
