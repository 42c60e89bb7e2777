package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/dsh-dev/dsh/internal/mcp"
)

// mcpSignInWait bounds how long a session waits, in the background, for the
// user to sign in to a server that asked.
const mcpSignInWait = 10 * time.Minute

// needsSignIn returns the server a start error is about when that server
// asked for a sign-in and the session can offer one.
func needsSignIn(o *Options, err error) (mcp.ServerConfig, bool) {
	var se *mcp.StartError
	if o.MCPTokens == nil || !errors.Is(err, mcp.ErrNeedsSignIn) || !errors.As(err, &se) {
		return mcp.ServerConfig{}, false
	}
	for _, c := range o.MCP {
		if c.Name == se.Server {
			return c, true
		}
	}
	return mcp.ServerConfig{}, false
}

// signInLater signs in to server c in the background: the user is shown the
// link (every consumer shows MCPNotice), and the sign-in is kept for the
// sessions after. Closing the closer gives up waiting.
func signInLater(o *Options, c mcp.ServerConfig) io.Closer {
	ctx, cancel := context.WithTimeout(context.Background(), mcpSignInWait)
	done := make(chan struct{})
	notice := o.MCPNotice
	go func() {
		defer close(done)
		_, err := mcp.Login(ctx, c, mcp.Options{ClientVersion: o.Version, Tokens: o.MCPTokens,
			SignIn: func(server, url string) {
				notice(fmt.Sprintf("MCP server %s needs you to sign in: open %s (or run dsh mcp login %s)", server, url, server))
			}})
		switch {
		case err == nil:
			notice(fmt.Sprintf("Signed in to MCP server %s; its tools come with the next session", c.Name))
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			notice(fmt.Sprintf("MCP server %s: the sign-in link expired; dsh mcp login %s signs in", c.Name, c.Name))
		case ctx.Err() == nil:
			notice(fmt.Sprintf("MCP server %s: the sign-in failed: %v", c.Name, err))
		}
	}()
	return closerFunc(func() error {
		cancel()
		<-done
		return nil
	})
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }
