package cli

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path/filepath"

	"github.com/dsh-dev/dsh/internal/config"
	"github.com/dsh-dev/dsh/internal/control"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/toolset"
	"github.com/dsh-dev/dsh/internal/web"
)

const webSummary = `dsh web serves a page that lists every session and shows any of them live; from
it you start sessions (in --dir, or a directory inside it), send prompts with
files and images, answer permission requests and questions, cancel, /undo and
/rewind, switch mode, model and thinking, continue, rename and delete sessions,
and join a session live in another dsh process (a chat, dsh run) to answer it.

It listens on loopback. --addr with another address needs --remote: the page
is then served over HTTPS with a certificate dsh makes (its SHA-256 fingerprint
is printed: check it in the browser). Prefer an SSH tunnel (see the README).`

// runWebCmd serves the web view of every session until ctx is cancelled.
func runWebCmd(ctx context.Context, io IO, args []string) error {
	fs := newFlags(io, "web", "[--addr 127.0.0.1:0] [--dir DIR]…", webSummary)
	var f settingsFlags
	f.register(fs)
	addr := fs.String("addr", "127.0.0.1:0", "`host:port` to listen on; keep it on loopback (port 0 picks a free one)")
	remote := fs.Bool("remote", false, "allow an --addr that is not loopback: serve HTTPS with a self-signed certificate")
	var dirs []string
	fs.Func("dir", "the page may start sessions in `DIR` and the directories inside it (repeatable; default: the current directory)", func(d string) error {
		dirs = append(dirs, d)
		return nil
	})
	if err := parse(io, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr(io, fs, "unexpected argument %q", fs.Arg(0))
	}
	dir, err := session.Dir(f.in.SessionDir)
	if err != nil {
		return err
	}
	if len(dirs) == 0 {
		dirs = []string{io.Cwd}
	}
	for i, d := range dirs {
		if !filepath.IsAbs(d) {
			dirs[i] = filepath.Join(io.Cwd, d)
		}
	}
	// Refused before listening: nothing beyond loopback is ever served in plain HTTP.
	if !*remote && !loopbackAddr(*addr) {
		return usageErr(io, fs, "--addr %s is not a loopback address: anyone who reaches it could run commands as you; "+
			"add --remote to serve it over HTTPS, or use an SSH tunnel (see the README)", *addr)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	tcp, _ := ln.Addr().(*net.TCPAddr)
	if tcp == nil || (!*remote && !tcp.IP.IsLoopback()) { // a name that resolved beyond loopback
		_ = ln.Close()
		return fmt.Errorf("dsh web: %s listens on %s, not on loopback: add --remote to serve it over HTTPS", *addr, ln.Addr())
	}
	token := web.NewToken()
	srv, err := web.New(web.Options{Dir: dir, Token: token, Registry: toolset.All(), Roots: dirs,
		Open: webOpener(ctx, io, f), Join: webJoiner(dir)})
	if err != nil {
		_ = ln.Close()
		return err
	}
	defer func() {
		if err := srv.Close(); err != nil {
			warner(io)(err.Error())
		}
	}()
	host := "127.0.0.1"
	if !tcp.IP.IsUnspecified() {
		host = tcp.IP.String()
	}
	scheme := "http"
	var names []string
	if *remote {
		scheme = "https"
		names = web.LocalNames(tcp.IP)
		cert, fp, err := web.Certificate(filepath.Join(filepath.Dir(dir), "web"), names, io.Now())
		if err != nil {
			_ = ln.Close()
			return err
		}
		ln = web.TLSListener(ln, cert)
		if !tcp.IP.IsLoopback() {
			fmt.Fprintf(io.Err, "dsh web: warning: listening on %s, not only on loopback: anyone who can reach it and learns the URL can run commands as you\n", ln.Addr())
		}
		fmt.Fprintf(io.Err, "dsh web: HTTPS with a certificate dsh made; its SHA-256 fingerprint is %s — check that the browser shows the same\n", fp)
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(host, portOf(ln.Addr())), Path: "/", RawQuery: "token=" + token}
	fmt.Fprintf(io.Out, "dsh web: serving the sessions in %s\nOpen %s\n(Ctrl-C to stop)\n", dir, u.String())
	return web.Serve(ctx, ln, srv, names...) // it closes ln
}

// webOpener opens the sessions the page starts, each with the settings of its
// own directory, as the chat would there. A folder whose project settings wait
// for the user's trust is asked about on the page first.
func webOpener(ctx context.Context, io IO, f settingsFlags) func(context.Context, web.OpenRequest) (web.Live, error) {
	return func(rctx context.Context, r web.OpenRequest) (web.Live, error) {
		dio := io
		dio.Cwd = r.Dir
		st, err := f.resolve(rctx, dio)
		if err != nil {
			return web.Live{}, err
		}
		if proj, ok := st.Project(); ok && !proj.Decided && len(st.Ignored()) > 0 {
			if r.Trust == nil {
				return web.Live{}, &web.TrustError{Dir: r.Dir, What: proj.Named(), Ignored: st.Ignored()}
			}
			if err := config.RecordTrust(io.Getenv, r.Dir, proj.SHA256, *r.Trust); err != nil {
				return web.Live{}, fmt.Errorf("record the answer to trust %s: %w", r.Dir, err)
			}
			if *r.Trust {
				if st, err = f.resolve(rctx, dio); err != nil {
					return web.Live{}, err
				}
			}
		}
		op := &opener{io: dio, o: sessionFlags{settingsFlags: f}, st: st, statusLine: true}
		s, err := op.open(r.Resume, nil)
		if err != nil {
			return web.Live{}, err
		}
		return web.Live{Session: s, Events: events(s, ctx.Done())}, nil
	}
}

// loopbackAddr says addr (host:port) listens on loopback only.
func loopbackAddr(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// webJoiner joins a session live in another dsh process through its control
// socket; the page's answers are logged as the web's.
func webJoiner(dir string) func(context.Context, string) (web.Live, error) {
	return func(ctx context.Context, id string) (web.Live, error) {
		c, err := control.DialSession(ctx, dir, id, control.DialOptions{From: "web"})
		if err != nil {
			return web.Live{}, err
		}
		return web.Live{Session: joined{c}, Events: c.Events()}, nil
	}
}

// joined is a control client as the page drives it.
type joined struct{ *control.Client }

// Rename names the session; it waits for the session's process to log it.
func (j joined) Rename(title string) error {
	return j.Client.Rename(context.Background(), title)
}

func portOf(a net.Addr) string {
	_, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "0"
	}
	return port
}
