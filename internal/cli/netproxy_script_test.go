package cli

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"
)

// netServers are the loopback servers a script starts to be reached, or not,
// by sandboxed commands (testdata/script/network_domains.txtar).
type netServers struct {
	mu   sync.Mutex
	hits map[string]int          // requests each HTTP server answered
	udp  map[string]*net.UDPConn // datagrams wait in each UDP socket
}

const netServersKey = "netServers"

// netCmds are the scripts' commands for servers:
//
//	serve NAME      an HTTP server on 127.0.0.1 answering "NAME"; sets NAME_PORT
//	udpserve NAME   a UDP socket on 127.0.0.1; sets NAME_PORT
//	hits NAME N     NAME was reached N times since the last hits (UDP: datagrams)
func netCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	servers := func(ts *testscript.TestScript) *netServers { return ts.Value(netServersKey).(*netServers) }
	port := func(ts *testscript.TestScript, name, addr string) {
		_, p, _ := net.SplitHostPort(addr)
		ts.Setenv(strings.ToUpper(name)+"_PORT", p)
	}
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"serve": func(ts *testscript.TestScript, _ bool, args []string) {
			name := args[0]
			s := servers(ts)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				s.mu.Lock()
				s.hits[name]++
				s.mu.Unlock()
				_, _ = io.WriteString(w, "reached "+name+"\n")
			}))
			ts.Defer(srv.Close)
			port(ts, name, srv.Listener.Addr().String())
		},
		"udpserve": func(ts *testscript.TestScript, _ bool, args []string) {
			c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			ts.Check(err)
			ts.Defer(func() { _ = c.Close() })
			s := servers(ts)
			s.mu.Lock()
			s.udp[args[0]] = c
			s.mu.Unlock()
			port(ts, args[0], c.LocalAddr().String())
		},
		"hits": func(ts *testscript.TestScript, _ bool, args []string) {
			s := servers(ts)
			s.mu.Lock()
			defer s.mu.Unlock()
			n := s.hits[args[0]]
			s.hits[args[0]] = 0
			if c := s.udp[args[0]]; c != nil {
				// A datagram to loopback is queued by the time its sendto
				// returns, so what the finished command sent is all here.
				rc, err := c.SyscallConn()
				ts.Check(err)
				b := make([]byte, 512)
				for more := true; more; {
					ts.Check(rc.Read(func(fd uintptr) bool {
						_, _, err := syscall.Recvfrom(int(fd), b, syscall.MSG_DONTWAIT)
						if more = err == nil; more {
							n++
						}
						return true // never wait
					}))
				}
			}
			if want, _ := strconv.Atoi(args[1]); n != want {
				ts.Fatalf("%s was reached %d times, want %d", args[0], n, want)
			}
		},
	}
}
