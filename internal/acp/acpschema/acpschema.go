// Package acpschema checks ACP messages against the protocol's JSON Schema
// (v1 as of protocol 1.7.0, schema 1.21.0, vendored in testdata), for tests:
// each message of a conversation, in both directions, against the definition
// of what it is — the params of its method, the result of the request it
// answers — and against its side's envelope, in the stable schema where the
// stable protocol has the method and in the unstable one, separately.
package acpschema

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed testdata/schema.json testdata/schema.unstable.json
var files embed.FS

// The two schemas: what the stable protocol has, and everything.
const (
	Stable   = "schema.json"
	Unstable = "schema.unstable.json"
)

// Side is who wrote a message.
type Side int

const (
	Agent Side = iota
	Client
)

// Counts are how many messages were checked, and against which schema.
type Counts struct {
	Messages, Stable, Unstable int
}

func (c *Counts) add(o Counts) {
	c.Messages += o.Messages
	c.Stable += o.Stable
	c.Unstable += o.Unstable
}

func (c Counts) String() string {
	return fmt.Sprintf("%d messages valid against ACP schema 1.21.0 (%d against the stable schema, %d against the unstable one)",
		c.Messages, c.Stable, c.Unstable)
}

// schemaFile is one schema, compiled on demand.
type schemaFile struct {
	name string
	comp *jsonschema.Compiler
	// defs names, by method, the definitions of its params (request or
	// notification) and of its result.
	params, result map[string]string

	mu       sync.Mutex
	compiled map[string]*jsonschema.Schema
}

var (
	loadOnce sync.Once
	loaded   map[string]*schemaFile
	loadErr  error
)

func load() (map[string]*schemaFile, error) {
	loadOnce.Do(func() {
		loaded = map[string]*schemaFile{}
		for _, name := range []string{Stable, Unstable} {
			f, err := open(name)
			if err != nil {
				loadErr = err
				return
			}
			loaded[name] = f
		}
	})
	return loaded, loadErr
}

func open(name string) (*schemaFile, error) {
	b, err := files.ReadFile("testdata/" + name)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	comp := jsonschema.NewCompiler()
	if err := comp.AddResource(name, doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var raw struct {
		Defs map[string]struct {
			Method string `json:"x-method"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f := &schemaFile{name: name, comp: comp, params: map[string]string{}, result: map[string]string{}, compiled: map[string]*jsonschema.Schema{}}
	for def, d := range raw.Defs {
		switch {
		case d.Method == "":
		case strings.HasSuffix(def, "Response"):
			f.result[d.Method] = def
		case strings.HasSuffix(def, "Request"), strings.HasSuffix(def, "Notification"):
			f.params[d.Method] = def
		}
	}
	return f, nil
}

func (f *schemaFile) schema(def string) (*jsonschema.Schema, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.compiled[def]; ok {
		return s, nil
	}
	s, err := f.comp.Compile(f.name + "#/$defs/" + def)
	if err != nil {
		return nil, err
	}
	f.compiled[def] = s
	return s, nil
}

// Methods names the requests of a conversation by side and id, so that a
// response is checked as the result of the method it answers.
type Methods map[Side]map[string]string

// Conversation checks the messages each side wrote, in order; it returns what
// it checked and every violation.
func Conversation(agent, client []string) (Counts, []error) {
	methods := Methods{Agent: requests(agent), Client: requests(client)}
	var n Counts
	var errs []error
	for _, side := range []struct {
		s     Side
		lines []string
	}{{Agent, agent}, {Client, client}} {
		for i, l := range side.lines {
			c, err := Message(side.s, l, methods)
			if err != nil {
				who := "dsh's"
				if side.s == Client {
					who = "the client's"
				}
				errs = append(errs, fmt.Errorf("%s message %d violates the ACP schema: %w\n%s", who, i+1, err, l))
				continue
			}
			n.add(c)
		}
	}
	return n, errs
}

// requests are the ids of the requests among lines, with their methods.
func requests(lines []string) map[string]string {
	m := map[string]string{}
	for _, l := range lines {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal([]byte(l), &msg) == nil && msg.Method != "" && len(msg.ID) > 0 {
			m[idKey(msg.ID)] = msg.Method
		}
	}
	return m
}

func idKey(id json.RawMessage) string {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return string(id)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Message checks one message side wrote; a response's method is the other
// side's request of the same id in methods.
func Message(side Side, line string, methods Methods) (Counts, error) {
	fs, err := load()
	if err != nil {
		return Counts{}, err
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
	if err != nil {
		return Counts{}, err
	}
	obj, ok := v.(map[string]any)
	if !ok || obj["jsonrpc"] != "2.0" {
		return Counts{}, errors.New("not a JSON-RPC 2.0 object")
	}
	method, _ := obj["method"].(string)
	_, hasID := obj["id"]
	var env, part string // the side's envelope, and the definition of the part
	var value any
	prefix := "Agent"
	if side == Client {
		prefix = "Client"
	}
	other := Client
	if side == Client {
		other = Agent
	}
	switch {
	case method == "$/cancel_request":
		part, value = "params", obj["params"]
	case method != "" && hasID:
		env, part, value = prefix+"Request", "params", obj["params"]
	case method != "":
		env, part, value = prefix+"Notification", "params", obj["params"]
	case obj["error"] != nil:
		env, part, value = prefix+"Response", "error", obj["error"]
	default:
		id, _ := json.Marshal(obj["id"])
		method = methods[other][idKey(id)]
		if method == "" {
			return Counts{}, fmt.Errorf("a result for id %s, which names no request", id)
		}
		env, part, value = prefix+"Response", "result", obj["result"]
	}
	n := Counts{Messages: 1}
	for _, f := range []*schemaFile{fs[Stable], fs[Unstable]} {
		def := "Error"
		switch part {
		case "params":
			def = f.params[method]
		case "result":
			def = f.result[method]
		}
		if def == "" {
			if f.name == Stable {
				continue // an unstable method: the unstable schema alone has it
			}
			return Counts{}, fmt.Errorf("no definition of %s's %s in the schema", method, part)
		}
		for _, d := range []string{env, def} {
			if d == "" {
				continue
			}
			s, err := f.schema(d)
			if err != nil {
				return Counts{}, err
			}
			x := v
			if d == def {
				x = value
			}
			if err := s.Validate(x); err != nil {
				return Counts{}, fmt.Errorf("%s (%s): %w", d, f.name, err)
			}
		}
		if f.name == Stable {
			n.Stable++
		} else {
			n.Unstable++
		}
	}
	return n, nil
}
