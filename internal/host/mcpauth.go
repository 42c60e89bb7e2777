package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/dsh-dev/dsh/internal/mcp"
	"github.com/dsh-dev/dsh/internal/session"
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

// signInLater signs in to server c in the background and then has it join
// the session's servers. The user is shown the link, and then how it ended,
// as sign-in records (signedIn), which every consumer draws as one card; the
// sign-in is kept for the sessions after. Closing the closer gives up
// waiting.
func signInLater(servers *mcp.Servers, n *mcpNotes, c mcp.ServerConfig) io.Closer {
	ctx, cancel := context.WithTimeout(context.Background(), mcpSignInWait)
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := servers.Join(ctx, c, func(server, url string) {
			n.signedIn(session.SignIn{Server: server, State: session.SignInWaiting, URL: url})
		})
		switch {
		case err == nil:
			n.replace(signInNote(c.Name), fmt.Sprintf("The user signed in to MCP server %s: its tools are available now", c.Name))
			n.signedIn(session.SignIn{Server: c.Name, State: session.SignInDone})
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			n.signedIn(session.SignIn{Server: c.Name, State: session.SignInFailed,
				Error: fmt.Sprintf("the link expired; dsh mcp login %s signs in", c.Name)})
		case ctx.Err() == nil:
			n.signedIn(session.SignIn{Server: c.Name, State: session.SignInFailed, Error: errors.Unwrap(err).Error()})
		}
	}()
	return closerFunc(func() error {
		cancel()
		<-done
		return nil
	})
}

// signInNote tells the model that server waits for the user's sign-in.
func signInNote(server string) string {
	return fmt.Sprintf("MCP server %s needs the user to sign in; its tools come once they have", server)
}

// signInText is what a sign-in record says to a consumer that shows text.
func signInText(s session.SignIn) string {
	switch s.State {
	case session.SignInWaiting:
		return fmt.Sprintf("MCP server %s needs you to sign in: open %s (or run dsh mcp login %s)", s.Server, s.URL, s.Server)
	case session.SignInDone:
		return fmt.Sprintf("Signed in to MCP server %s: its tools are ready", s.Server)
	}
	return fmt.Sprintf("MCP server %s: the sign-in failed: %s", s.Server, s.Error)
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }
