package cli

import (
	"context"
	"fmt"
	"net"
	"net/url"

	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/toolset"
	"github.com/dsh-dev/dsh/internal/web"
)

// runWebCmd serves the web view of every session until ctx is cancelled.
func runWebCmd(ctx context.Context, io IO, args []string) error {
	fs := newFlags(io, "web", "[--addr 127.0.0.1:0]", "serve a local web view of every session, live")
	addr := fs.String("addr", "127.0.0.1:0", "`host:port` to listen on; keep it on loopback (port 0 picks a free one)")
	dirFlag := fs.String("session-dir", "", "the session directory (default $XDG_STATE_HOME/dsh/sessions)")
	if err := parse(io, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr(io, fs, "unexpected argument %q", fs.Arg(0))
	}
	dir, err := session.Dir(*dirFlag)
	if err != nil {
		return err
	}
	token := web.NewToken()
	srv, err := web.New(web.Options{Dir: dir, Token: token, Registry: toolset.All()})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	tcp, _ := ln.Addr().(*net.TCPAddr)
	host := "127.0.0.1"
	if tcp != nil && !tcp.IP.IsUnspecified() {
		host = tcp.IP.String()
	}
	if tcp == nil || !tcp.IP.IsLoopback() {
		fmt.Fprintf(io.Err, "dsh web: warning: listening on %s, not only on loopback: anyone who can reach it and learns the URL can read every session\n", ln.Addr())
	}
	u := url.URL{Scheme: "http", Host: net.JoinHostPort(host, portOf(ln.Addr())), Path: "/", RawQuery: "token=" + token}
	fmt.Fprintf(io.Out, "dsh web: serving the sessions in %s\nOpen %s\n(Ctrl-C to stop)\n", dir, u.String())
	return web.Serve(ctx, ln, srv) // it closes ln
}

func portOf(a net.Addr) string {
	_, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "0"
	}
	return port
}
