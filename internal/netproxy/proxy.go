package netproxy

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Port is where a confined command finds the proxy: on 127.0.0.1 of the
// network namespace of its own, which has nothing else on it.
const Port = 3128

// TestHostsEnv names the variable through which tests map names to loopback
// addresses ("a.test=127.0.0.1,b.test=::1"): only tests set it, and an
// address that is not loopback in it is ignored, so it can send nothing
// anywhere but this machine.
const TestHostsEnv = "DSH_TEST_NETPROXY_HOSTS"

// Env are the variables that point a confined command's clients at the proxy:
// HTTP and HTTPS through it, other TCP through its SOCKS5 side, which resolves
// names itself (socks5h). The command's own loopback stays direct.
func Env() []string {
	web := "http://127.0.0.1:" + strconv.Itoa(Port)
	socks := "socks5h://127.0.0.1:" + strconv.Itoa(Port)
	const local = "localhost,127.0.0.1,::1"
	return []string{
		"HTTP_PROXY=" + web, "HTTPS_PROXY=" + web, "http_proxy=" + web, "https_proxy=" + web,
		"ALL_PROXY=" + socks, "all_proxy=" + socks, "NO_PROXY=" + local, "no_proxy=" + local,
	}
}

// Proxy dials hosts for confined commands and web_fetch as the rules say.
type Proxy struct {
	rules Rules
	hosts map[string]netip.Addr // TestHostsEnv's names
}

// New is the proxy of rules; getenv is read for TestHostsEnv.
func New(rules Rules, getenv func(string) string) *Proxy {
	p := &Proxy{rules: rules, hosts: map[string]netip.Addr{}}
	for pair := range strings.SplitSeq(getenv(TestHostsEnv), ",") {
		name, addr, _ := strings.Cut(pair, "=")
		if a, err := netip.ParseAddr(strings.TrimSpace(addr)); err == nil && a.IsLoopback() {
			p.hosts[normalize(name)] = a
		}
	}
	return p
}

// Rules are the proxy's rules.
func (p *Proxy) Rules() Rules { return p.rules }

// Transport is an HTTP transport that reaches only what the rules allow,
// resolving names as the proxy does (for web_fetch).
func (p *Proxy) Transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = p.Dial
	return t
}

// Dial connects to addr (host:port) over TCP when the rules allow host; a
// refusal is a *Refused.
func (p *Proxy) Dial(ctx context.Context, _, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("proxy target %q: %w", addr, err)
	}
	if err := p.rules.Check(host); err != nil {
		return nil, err
	}
	addrs, err := p.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	var first error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// resolve finds host's addresses. A name that resolves to this machine or its
// link (loopback, link-local, the cloud's metadata address) is refused: the
// allowed name of a hostile DNS server must not reach local services. An
// address the rules listed is taken as it is.
func (p *Proxy) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	h := normalize(host)
	if a, ok := ip(h); ok {
		return []netip.Addr{a}, nil
	}
	if a, ok := p.hosts[h]; ok {
		return []netip.Addr{a}, nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", h)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", h, err)
	}
	var out []netip.Addr
	for _, a := range addrs {
		a = a.Unmap()
		if !a.IsLoopback() && !a.IsLinkLocalUnicast() && !a.IsUnspecified() && !a.IsMulticast() {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, &Refused{h, "it resolves to a local address (" + addrs[0].String() + ")"}
	}
	return out, nil
}

// Session serves one command's connections on its listener, and remembers
// the hosts it refused.
type Session struct {
	p      *Proxy
	l      net.Listener
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	refused []string
	closed  bool
}

// Serve serves the proxy on l until Close.
func (p *Proxy) Serve(l net.Listener) *Session {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Session{p: p, l: l, ctx: ctx, cancel: cancel, conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.accept()
	return s
}

// Close stops serving, ends every connection still open, and returns the
// hosts refused, each once, in the order they were.
func (s *Session) Close() []string {
	_ = s.l.Close()
	s.cancel()
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return s.refused
}

func (s *Session) accept() {
	defer s.wg.Done()
	for {
		c, err := s.l.Accept()
		if err != nil {
			return // closed
		}
		if !s.track(c) {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.untrack(c)
			s.handle(c)
		}()
	}
}

// track registers a connection to end at Close; false (and closed) once
// Close has run.
func (s *Session) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = c.Close()
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Session) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	_ = c.Close()
}

// dial is the proxy's Dial for this session's command: a refusal is
// remembered for its card.
func (s *Session) dial(addr string) (net.Conn, error) {
	c, err := s.p.Dial(s.ctx, "tcp", addr)
	if r, ok := errors.AsType[*Refused](err); ok {
		s.mu.Lock()
		if !slices.Contains(s.refused, r.Host) {
			s.refused = append(s.refused, r.Host)
		}
		s.mu.Unlock()
	}
	if err != nil {
		return nil, err
	}
	if !s.track(c) {
		return nil, errors.New("the command has ended")
	}
	return c, nil
}

// handle serves one connection: SOCKS5 (its first byte is the version, 5),
// else HTTP: a CONNECT tunnel or one plain request in absolute form.
func (s *Session) handle(c net.Conn) {
	br := bufio.NewReader(c)
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	if first[0] == 5 {
		s.socks(c, br)
		return
	}
	req, err := http.ReadRequest(br)
	if err != nil {
		httpError(c, http.StatusBadRequest, "dsh's proxy could not read the request: "+err.Error())
		return
	}
	target := req.Host
	if req.Method != http.MethodConnect {
		if req.URL.Scheme != "http" || req.URL.Host == "" {
			httpError(c, http.StatusBadRequest, "dsh's proxy takes CONNECT, and plain http:// requests in absolute form")
			return
		}
		target = req.URL.Host
		if req.URL.Port() == "" {
			target = net.JoinHostPort(req.URL.Hostname(), "80")
		}
	}
	up, err := s.dial(target)
	if err != nil {
		status := http.StatusBadGateway
		if _, ok := errors.AsType[*Refused](err); ok {
			status = http.StatusForbidden
		}
		httpError(c, status, err.Error())
		return
	}
	defer s.untrack(up)
	if req.Method == http.MethodConnect {
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err == nil {
			splice(c, br, up)
		}
		return
	}
	// One request a connection: a second one could name another host. (The
	// Host sent is the URL's, the one checked: ReadRequest ignores the header
	// of a request in absolute form.)
	req.Header.Del("Proxy-Connection")
	req.Header.Del("Proxy-Authorization")
	req.Close = true
	if err := req.Write(up); err != nil {
		return
	}
	_, _ = io.Copy(c, up)
}

// httpError answers a proxy request with status and a message a person can
// read (curl -v, and the body for clients that show it).
func httpError(c net.Conn, status int, msg string) {
	_, _ = fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s\n",
		status, http.StatusText(status), len(msg)+1, msg)
}

// splice copies both ways until each side has finished sending.
func splice(c net.Conn, br *bufio.Reader, up net.Conn) {
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(up, br)
		closeWrite(up)
		close(done)
	}()
	_, _ = io.Copy(c, up)
	closeWrite(c)
	<-done
}

func closeWrite(c net.Conn) {
	if w, ok := c.(interface{ CloseWrite() error }); ok {
		_ = w.CloseWrite()
	}
}

// SOCKS5 replies (RFC 1928).
const (
	socksOK          = 0
	socksNotAllowed  = 2
	socksUnreachable = 4
	socksNoCommand   = 7
	socksNoAddrType  = 8
)

// socks serves a SOCKS5 CONNECT without authentication; the reply cannot
// carry a message, so a refusal is "not allowed by ruleset" (and on the card).
func (s *Session) socks(c net.Conn, br *bufio.Reader) {
	reply := func(code byte) {
		_, _ = c.Write([]byte{5, code, 0, 1, 0, 0, 0, 0, 0, 0})
	}
	var hdr [2]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return
	}
	if _, err := io.ReadFull(br, make([]byte, hdr[1])); err != nil {
		return
	}
	if _, err := c.Write([]byte{5, 0}); err != nil {
		return
	}
	var req [4]byte // version, command, reserved, address type
	if _, err := io.ReadFull(br, req[:]); err != nil || req[0] != 5 {
		return
	}
	var host string
	switch req[3] {
	case 1, 4:
		b := make([]byte, 4+12*int(req[3]/4))
		if _, err := io.ReadFull(br, b); err != nil {
			return
		}
		a, _ := netip.AddrFromSlice(b)
		host = a.Unmap().String()
	case 3:
		n, err := br.ReadByte()
		if err != nil {
			return
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return
		}
		host = string(b)
	default:
		reply(socksNoAddrType)
		return
	}
	var port [2]byte
	if _, err := io.ReadFull(br, port[:]); err != nil {
		return
	}
	if req[1] != 1 { // only CONNECT: no BIND, no UDP
		reply(socksNoCommand)
		return
	}
	up, err := s.dial(net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(port[:])))))
	if err != nil {
		if _, ok := errors.AsType[*Refused](err); ok {
			reply(socksNotAllowed)
		} else {
			reply(socksUnreachable)
		}
		return
	}
	defer s.untrack(up)
	reply(socksOK)
	splice(c, br, up)
}
