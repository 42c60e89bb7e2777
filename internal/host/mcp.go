package host

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/dsh-dev/dsh/internal/command"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsh-dev/dsh/internal/mcp"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// mcpConnectTimeout bounds starting a session's MCP servers (npx may install
// first); opening the session waits for them, so the model has their tools at
// once.
const mcpConnectTimeout = 45 * time.Second

// mcpNotes is what the model must be told about the session's MCP servers
// (ones that did not start, or stopped), with the next prompt.
type mcpNotes struct {
	mu     sync.Mutex
	model  []string
	signIn []string // servers that wait for the user to sign in

	// The servers' tools, changed (tools/list_changed), go into reg once
	// both are known: a server may change them before the session is built.
	servers *mcp.Servers
	reg     *tool.Registry
	retool  bool

	// listed counts the changes of the servers' listings (Status.MCPListed);
	// publish, once the session is built, tells its consumers of one.
	listed  atomic.Uint64
	publish func()

	// signIns are the sign-in records made before anyone could see them;
	// put, once someone subscribes, logs them and those after.
	signIns []session.Record
	put     func(session.Record) (session.Record, error)
}

// signedIn tells the user of a sign-in (asked for, done, failed) by a
// record of its own, once the session has someone to show it to.
func (n *mcpNotes) signedIn(s session.SignIn) {
	rec := session.Record{Type: session.TypeReply, Text: signInText(s), SignIn: &s}
	n.mu.Lock()
	put := n.put
	if put == nil {
		n.signIns = append(n.signIns, rec)
	}
	n.mu.Unlock()
	if put != nil {
		_, _ = put(rec) // a session closing has no one left to tell
	}
}

// deliver logs, through put, the sign-in records made so far and from now
// on: the session has a subscriber.
func (n *mcpNotes) deliver(put func(session.Record) (session.Record, error)) {
	n.mu.Lock()
	if n.put != nil {
		n.mu.Unlock()
		return
	}
	held := n.signIns
	n.signIns = nil
	for _, rec := range held {
		_, _ = put(rec)
	}
	n.put = put
	n.mu.Unlock()
}

// listsChanged counts a change of the servers' listings and has the
// session's status say so: consumers that keep a listing (the commands
// their prompts become, @ completion of their resources) list again.
func (n *mcpNotes) listsChanged() {
	n.listed.Add(1)
	n.mu.Lock()
	publish := n.publish
	n.mu.Unlock()
	if publish != nil {
		publish()
	}
}

// follow makes publish tell the session's consumers of each change.
func (n *mcpNotes) follow(publish func()) {
	n.mu.Lock()
	n.publish = publish
	n.mu.Unlock()
}

// toolsChanged offers the servers' tools as they are now in place of those
// the registry has, from the model's next call; before the registry is
// built, once it is (useRegistry).
func (n *mcpNotes) toolsChanged() {
	n.mu.Lock()
	n.retool = true
	swapped := n.retoolLocked()
	n.mu.Unlock()
	if swapped {
		n.listsChanged()
	}
}

// useRegistry is the session's registry, for the servers' changed tools.
func (n *mcpNotes) useRegistry(reg *tool.Registry) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.reg = reg
	n.retoolLocked()
}

// retoolLocked swaps the registry's MCP tools for the servers' if they
// changed and both are known, and says whether it did.
func (n *mcpNotes) retoolLocked() bool {
	if !n.retool || n.reg == nil || n.servers == nil {
		return false
	}
	n.retool = false
	// Every MCP tool is named mcp__SERVER__TOOL (mcp.ToolName).
	n.reg.Replace(func(t tool.Tool) bool { return strings.HasPrefix(t.Name(), "mcp__") }, n.servers.Tools())
	return true
}

func (n *mcpNotes) add(msg string) {
	n.mu.Lock()
	n.model = append(n.model, msg)
	n.mu.Unlock()
}

// replace puts msg in place of the note old if the model has not been
// given it yet (it would say what is no longer so), else adds msg.
func (n *mcpNotes) replace(old, msg string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if i := slices.Index(n.model, old); i >= 0 {
		n.model[i] = msg
		return
	}
	n.model = append(n.model, msg)
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
		Tokens:         o.MCPTokens,
		Notice:         func(_, msg string) { tell(msg) },
		Roots:          append([]string{dir}, o.Roots...),
		Log:            o.MCPLog,
		ToolsChanged:   n.toolsChanged,
		ListsChanged:   n.listsChanged,
		OnRestart: func(server string, err error) {
			tell(fmt.Sprintf("MCP server %s stopped (%v) and was started again; a call running then failed, and the server kept nothing from before", server, err))
		},
		OnExit: func(server string, err error) {
			tell(fmt.Sprintf("MCP server %s stopped for good (%v); its tools fail until the session is reopened", server, err))
		},
	})
	n.mu.Lock()
	n.servers = servers
	n.retool = false // the registry is built from the tools as they are now
	n.mu.Unlock()
	o.Tools = append(o.Tools, servers.Tools()...)
	o.Closers = append(o.Closers, servers)
	o.servers = servers
	for _, e := range unjoin(err) {
		if c, ok := needsSignIn(o, e); ok {
			n.add(signInNote(c.Name))
			n.signIn = append(n.signIn, c.Name)
			o.Closers = append(o.Closers, signInLater(servers, n, c))
			continue
		}
		tell(e.Error() + "; its tools are not available in this session")
	}
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

// promptPrefix starts the name of an MCP prompt's command, as in Claude Code:
// /mcp__SERVER__PROMPT.
const promptPrefix = "mcp__"

// promptCommands are the MCP servers' prompts as slash commands, with their
// arguments as the hint.
func (s *Session) promptCommands() []command.Command {
	if s.mcp == nil {
		return nil
	}
	var out []command.Command
	for _, p := range s.mcp.Prompts() {
		var hint []string
		for _, a := range p.Args {
			if a.Required {
				hint = append(hint, a.Name)
			} else {
				hint = append(hint, "["+a.Name+"]")
			}
		}
		out = append(out, command.Command{Name: promptPrefix + p.Server + "__" + p.Name,
			Description: cmp.Or(p.Description, "MCP prompt "+p.Name+" of "+p.Server),
			ArgHint:     strings.Join(hint, " "), Where: command.Both, Source: "mcp:" + p.Server})
	}
	return out
}

// ExpandPrompt is the text an MCP prompt's command (name, without the slash)
// gives for what was typed after it: words fill the prompt's arguments in
// order, the last one taking the rest. ok is false for a name that is not one.
func (s *Session) ExpandPrompt(ctx context.Context, name, args string) (text string, ok bool, err error) {
	if s.mcp == nil || !strings.HasPrefix(name, promptPrefix) {
		return "", false, nil
	}
	for _, p := range s.mcp.Prompts() {
		if promptPrefix+p.Server+"__"+p.Name != name {
			continue
		}
		vals := map[string]string{}
		rest := strings.TrimSpace(args)
		for i, a := range p.Args {
			if rest == "" {
				if a.Required {
					return "", true, fmt.Errorf("/%s needs %s", name, a.Name)
				}
				break
			}
			if i == len(p.Args)-1 {
				vals[a.Name] = rest
				break
			}
			word, more, _ := strings.Cut(rest, " ")
			vals[a.Name], rest = word, strings.TrimSpace(more)
		}
		ctx, cancel := context.WithTimeout(ctx, mcpConnectTimeout)
		defer cancel()
		text, err := s.mcp.GetPrompt(ctx, p.Server, p.Name, vals)
		return text, true, err
	}
	return "", false, nil
}
