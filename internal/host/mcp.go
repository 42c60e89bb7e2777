package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dsh-dev/dsh/internal/mcp"
)

// mcpConnectTimeout bounds starting a session's MCP servers (npx may install
// first); opening the session waits for them, so the model has their tools at
// once.
const mcpConnectTimeout = 45 * time.Second

// mcpNotes is what the model must be told about the session's MCP servers
// (ones that did not start, or stopped), with the next prompt.
type mcpNotes struct {
	mu    sync.Mutex
	model []string
}

func (n *mcpNotes) add(msg string) {
	n.mu.Lock()
	n.model = append(n.model, msg)
	n.mu.Unlock()
}

// take takes the notes the model has not been given yet.
func (n *mcpNotes) take() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := n.model
	n.model = nil
	return out
}

// startMCP starts o.MCP in dir and adds their tools and their closing to o.
// Every failure is told to the user (o.MCPNotice) and noted for the model;
// the session opens without that server.
func startMCP(o *Options, dir string) *mcpNotes {
	n := &mcpNotes{}
	if len(o.MCP) == 0 {
		return n
	}
	tell := func(msg string) {
		n.add(msg)
		o.MCPNotice(msg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), mcpConnectTimeout)
	defer cancel()
	servers, err := mcp.Start(ctx, o.MCP, mcp.Options{
		ClientVersion:  o.Version,
		Dir:            dir,
		ConnectTimeout: mcpConnectTimeout,
		OnExit: func(server string, err error) {
			tell(fmt.Sprintf("MCP server %s stopped (%v); its tools fail until the session is reopened", server, err))
		},
	})
	for _, e := range unjoin(err) {
		tell(e.Error() + "; its tools are not available in this session")
	}
	o.Tools = append(o.Tools, servers.Tools()...)
	o.Closers = append(o.Closers, servers)
	return n
}

func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	var j interface{ Unwrap() []error }
	if errors.As(err, &j) {
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
