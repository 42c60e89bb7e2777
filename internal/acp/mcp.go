package acp

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/host"
)

// mcpServers turns the servers a client sent into the MCP client's configs.
// Only the transports dsh advertises are accepted; a server dsh cannot start
// is an error for the user, not silently left out.
func mcpServers(in []sdk.McpServer) ([]host.MCPServer, []error) {
	var out []host.MCPServer
	var errs []error
	for _, s := range in {
		switch {
		case s.Stdio != nil:
			env := map[string]string{}
			for _, e := range s.Stdio.Env {
				env[e.Name] = e.Value
			}
			out = append(out, host.MCPServer{Name: s.Stdio.Name, Type: "stdio", Command: s.Stdio.Command,
				Args: s.Stdio.Args, Env: env})
		case s.Http != nil:
			out = append(out, host.MCPServer{Name: s.Http.Name, Type: "http", URL: s.Http.Url, Headers: headers(s.Http.Headers)})
		case s.Sse != nil:
			out = append(out, host.MCPServer{Name: s.Sse.Name, Type: "sse", URL: s.Sse.Url, Headers: headers(s.Sse.Headers)})
		case s.Acp != nil:
			errs = append(errs, fmt.Errorf("MCP server %s: MCP over ACP is not supported", s.Acp.Name))
		default:
			errs = append(errs, errors.New("MCP server (unnamed): no transport given"))
		}
	}
	return out, errs
}

func headers(hs []sdk.HttpHeader) map[string]string {
	m := map[string]string{}
	for _, h := range hs {
		m[h.Name] = h.Value
	}
	return m
}

// merge lays the client's servers over the configuration's: a name the
// client also gives is the client's server.
func merge(file, client []host.MCPServer) []host.MCPServer {
	out := slices.Clone(client)
	for _, f := range file {
		if !slices.ContainsFunc(client, func(c host.MCPServer) bool { return c.Name == f.Name }) {
			out = append(out, f)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// notes holds what the user must be told about a session's MCP servers
// (ones that did not start or stopped) and harness warnings (a refused
// project file) until the client knows the session;
// from then on it is told at once. The host tells the model.
type notes struct {
	mu   sync.Mutex
	user []string
	tell func(string) // set once the session can send; nil until then
}

func (n *notes) add(msg string) {
	n.mu.Lock()
	tell := n.tell
	if tell == nil {
		n.user = append(n.user, msg)
	}
	n.mu.Unlock()
	if tell != nil {
		tell(msg)
	}
}

// attach starts telling the user directly and returns what was held back.
func (n *notes) attach(tell func(string)) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.tell = tell
	held := n.user
	n.user = nil
	return held
}

// mcpFor is the servers of a session: the configuration's for its cwd with
// the client's laid over them. A server the client sent that dsh cannot
// start is a note.
func mcpFor(file []host.MCPServer, client []sdk.McpServer, n *notes) []host.MCPServer {
	cfgs, errs := mcpServers(client)
	for _, e := range errs {
		n.add(e.Error() + ": not started")
	}
	return merge(file, cfgs)
}

// userNote is how a note from dsh (about a server, or the user's input) is
// sent as agent text: a quoted paragraph of its own, never run into the
// model's words.
func userNote(msg string) string { return "\n\n> ⚠ " + strings.TrimSuffix(msg, ".") + ".\n\n" }
