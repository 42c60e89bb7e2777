package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dsh-dev/dsh/internal/mcp"
	"github.com/dsh-dev/dsh/internal/version"
)

const mcpSummary = `Manages the MCP servers of sessions in the current directory (the [mcp.NAME]
tables of config.toml):

  dsh mcp list          each server's state: connected (with its tools),
                        needs sign-in, or failed, and why
  dsh mcp login NAME    signs in to an http server that asks for it: prints the
                        link to open, waits for the browser to come back to a
                        listener on 127.0.0.1, and keeps the sign-in in
                        mcp-tokens.json beside config.toml, readable by you alone
  dsh mcp logout NAME   forgets the sign-in kept for the server

A session signs in by itself too: it shows the link of a server that asks.`

// mcpLoginWait bounds how long dsh mcp login waits for the browser.
const mcpLoginWait = 10 * time.Minute

func runMCPCmd(ctx context.Context, io IO, args []string) error {
	var o configOptions
	fs := newFlags(io, "mcp", "list | login NAME | logout NAME", mcpSummary)
	o.register(fs)
	if err := parse(io, fs, args); err != nil {
		return err
	}
	verb, rest := fs.Arg(0), fs.Args()
	if len(rest) > 0 {
		rest = rest[1:]
	}
	if want := map[string]int{"list": 0, "login": 1, "logout": 1}; verb == "" || len(rest) != want[verb] {
		if _, ok := want[verb]; !ok {
			return usageErr(io, fs, "want list, login NAME or logout NAME, got %q", strings.Join(fs.Args(), " "))
		}
		return usageErr(io, fs, "%s takes %d argument(s)", verb, want[verb])
	}
	st, err := o.resolve(ctx, io)
	if err != nil {
		return settingsErr(io, fs, err)
	}
	ho := st.Options()
	if verb == "list" {
		return mcpList(ctx, io, ho.MCP, ho.MCPTokens)
	}
	var c *mcp.ServerConfig
	for i := range ho.MCP {
		if ho.MCP[i].Name == rest[0] {
			c = &ho.MCP[i]
		}
	}
	if c == nil {
		return fmt.Errorf("no MCP server %s here (dsh mcp list shows them)", rest[0])
	}
	if verb == "logout" {
		if err := mcp.SignOut(*c, ho.MCPTokens); err != nil {
			return err
		}
		fmt.Fprintf(io.Out, "Forgot the sign-in to %s.\n", c.Name)
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, mcpLoginWait)
	defer cancel()
	asked, err := mcp.Login(ctx, *c, mcp.Options{ClientVersion: version.String(), Dir: io.Cwd, Tokens: ho.MCPTokens,
		SignIn: func(server, url string) {
			fmt.Fprintf(io.Out, "To sign in to %s, open this link in a browser:\n\n  %s\n\nWaiting for the browser to come back…\n", server, url)
		}})
	switch {
	case err != nil:
		return err
	case asked:
		fmt.Fprintf(io.Out, "Signed in to %s; sessions use the sign-in from now on (dsh mcp logout %s forgets it).\n", c.Name, c.Name)
	default:
		fmt.Fprintf(io.Out, "%s did not ask for a sign-in: it is connected as it is.\n", c.Name)
	}
	return nil
}

// mcpList starts each server as a session would, and says how it went.
func mcpList(ctx context.Context, io IO, cfgs []mcp.ServerConfig, tokens mcp.TokenStore) error {
	if len(cfgs) == 0 {
		fmt.Fprintln(io.Out, "No MCP servers here ([mcp.NAME] in config.toml adds one).")
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	servers, err := mcp.Start(ctx, cfgs, mcp.Options{ClientVersion: version.String(), Dir: io.Cwd, Tokens: tokens,
		Notice: func(_, msg string) { fmt.Fprintf(io.Err, "dsh: %s\n", msg) }})
	defer func() { _ = servers.Close() }()
	failed := map[string]error{}
	for _, e := range unjoinAll(err) {
		var se *mcp.StartError
		if errors.As(e, &se) {
			failed[se.Server] = se.Err
		}
	}
	for _, c := range cfgs {
		switch e := failed[c.Name]; {
		case errors.Is(e, mcp.ErrNeedsSignIn):
			fmt.Fprintf(io.Out, "%s: needs sign-in (dsh mcp login %s)\n", c.Name, c.Name)
		case e != nil:
			fmt.Fprintf(io.Out, "%s: failed: %v\n", c.Name, e)
		default:
			fmt.Fprintf(io.Out, "%s: connected, %d tools\n", c.Name, len(servers.ToolNames(c.Name)))
		}
	}
	return nil
}

func unjoinAll(err error) []error {
	var j interface{ Unwrap() []error }
	if errors.As(err, &j) {
		return j.Unwrap()
	}
	if err != nil {
		return []error{err}
	}
	return nil
}
