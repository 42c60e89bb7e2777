package acp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/config"
	"github.com/dsh-dev/dsh/internal/mcp"
)

// mcpConnectTimeout bounds starting a session's MCP servers (npx may install
// first); session/new waits for them, so the model has their tools at once.
const mcpConnectTimeout = 45 * time.Second

// mcpServers turns the servers a client sent into the MCP client's configs.
// Only the transports dsh advertises are accepted; a server dsh cannot start
// is an error for the user, not silently left out.
func mcpServers(in []sdk.McpServer) ([]mcp.ServerConfig, []error) {
	var out []mcp.ServerConfig
	var errs []error
	for _, s := range in {
		switch {
		case s.Stdio != nil:
			env := map[string]string{}
			for _, e := range s.Stdio.Env {
				env[e.Name] = e.Value
			}
			out = append(out, mcp.ServerConfig{Name: s.Stdio.Name, Type: "stdio", Command: s.Stdio.Command,
				Args: s.Stdio.Args, Env: env})
		case s.Http != nil:
			out = append(out, mcp.ServerConfig{Name: s.Http.Name, Type: "http", URL: s.Http.Url, Headers: headers(s.Http.Headers)})
		case s.Sse != nil:
			out = append(out, mcp.ServerConfig{Name: s.Sse.Name, Type: "sse", URL: s.Sse.Url, Headers: headers(s.Sse.Headers)})
		case s.Acp != nil:
			errs = append(errs, &mcp.StartError{Server: s.Acp.Name, Err: errors.New("MCP over ACP is not supported")})
		default:
			errs = append(errs, &mcp.StartError{Server: "(unnamed)", Err: errors.New("no transport given")})
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

// fromConfig converts the configuration file's servers.
func fromConfig(ss []config.MCPServer) []mcp.ServerConfig {
	out := make([]mcp.ServerConfig, 0, len(ss))
	for _, s := range ss {
		out = append(out, mcp.ServerConfig(s))
	}
	return out
}

// merge lays the client's servers over the configuration's: a name the
// client also gives is the client's server.
func merge(file, client []mcp.ServerConfig) []mcp.ServerConfig {
	out := slices.Clone(client)
	for _, f := range file {
		if !slices.ContainsFunc(client, func(c mcp.ServerConfig) bool { return c.Name == f.Name }) {
			out = append(out, f)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// notes collects what the user and the model must be told about a session's
// MCP servers: ones that did not start or stopped. The user is told at once
// (once the client knows the session); the model with the next prompt.
type notes struct {
	mu      sync.Mutex
	model   []string
	user    []string
	tell    func(string) // set once the session can send; nil until then
	started []string     // the servers that run
}

func (n *notes) add(msg string) {
	n.mu.Lock()
	n.model = append(n.model, msg)
	n.mu.Unlock()
	n.warn(msg)
}

// warn tells the user only: a harness warning such as a refused project file.
func (n *notes) warn(msg string) {
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

// forModel takes the notes the model has not been given yet.
func (n *notes) forModel() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := n.model
	n.model = nil
	return out
}

// startMCP starts the session's servers: the configuration file's for cwd and
// the client's. Every failure becomes a note; the session opens without that
// server.
func (a *Agent) startMCP(cwd string, cfg config.Config, client []sdk.McpServer) (*mcp.Servers, *notes) {
	n := &notes{}
	cfgs, errs := mcpServers(client)
	cfgs = merge(fromConfig(cfg.MCP), cfgs)
	for _, e := range errs {
		n.add(e.Error() + ": not started")
	}
	if len(cfgs) == 0 {
		return nil, n
	}
	ctx, cancel := context.WithTimeout(context.Background(), mcpConnectTimeout)
	defer cancel()
	servers, err := mcp.Start(ctx, cfgs, mcp.Options{
		ClientVersion:  a.o.Version,
		Dir:            cwd,
		ConnectTimeout: mcpConnectTimeout,
		OnExit: func(server string, err error) {
			n.add(fmt.Sprintf("MCP server %s stopped (%v); its tools fail until the session is reopened", server, err))
		},
	})
	for _, e := range unjoin(err) {
		n.add(e.Error() + "; its tools are not available in this session")
	}
	n.started = servers.Names()
	return servers, n
}

func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// withNotes is the prompt the model reads: the user's, then what it must know
// about the servers (after it, so the first line still titles the session).
func withNotes(text string, ns []string) string {
	if len(ns) == 0 {
		return text
	}
	return text + "\n\n[dsh: " + strings.Join(ns, ". ") + ".]"
}

// userNote is the message the user sees about a server.
func userNote(msg string) string { return "\n\n> ⚠ " + msg + ".\n\n" }
