package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/host"
)

// session/new answered before the SDK is the SDK's answer to the same
// request, byte for byte (but for the new session's id), errors included.
func TestNewSessionFastIsTheSDKs(t *testing.T) {
	root := t.TempDir()
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	extra := filepath.Join(root, "extra")
	if err := os.Mkdir(extra, 0o755); err != nil {
		t.Fatal(err)
	}
	quote := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	for name, c := range map[string]struct {
		params string
		setup  func(cwd string) (host.Setup, error)
		model  string
	}{
		"plain":         {params: `{"cwd":` + quote(root) + `,"mcpServers":[]}`},
		"extra dir":     {params: `{"cwd":` + quote(root) + `,"mcpServers":[],"additionalDirectories":[` + quote(extra) + `]}`},
		"meta":          {params: `{"_meta":{"x":[1,{"y":null}]},"cwd":` + quote(root) + `,"mcpServers":[]}`},
		"plan mode":     {params: `{"cwd":` + quote(root) + `,"mcpServers":[]}`, setup: mode(host.ModePlan)},
		"odd model":     {params: `{"cwd":` + quote(root) + `,"mcpServers":[]}`, model: "my <model> \u2028 é"},
		"relative cwd":  {params: `{"cwd":"rel/dir","mcpServers":[]}`},
		"no such cwd":   {params: `{"cwd":` + quote(filepath.Join(root, "gone")) + `,"mcpServers":[]}`},
		"relative dir":  {params: `{"cwd":` + quote(root) + `,"mcpServers":[],"additionalDirectories":["x"]}`},
		"bad settings":  {params: `{"cwd":` + quote(root) + `,"mcpServers":[]}`, setup: func(string) (host.Setup, error) { return host.Setup{}, errors.New(`settings.toml:3: "<x>" unknown`) }},
		"empty servers": {params: `{"mcpServers":[],"cwd":` + quote(root) + `}`},
	} {
		t.Run(name, func(t *testing.T) {
			o := func() Options {
				o := Options{SessionDir: t.TempDir(), Model: c.model, Setup: c.setup}
				if c.setup == nil {
					dir := o.SessionDir
					o.Setup = func(cwd string) (host.Setup, error) {
						return host.Setup{Options: host.Options{SessionDir: dir, Root: cwd}}, nil
					}
				}
				return o
			}
			p, ok := newSessionParams(jsontext.Value(c.params))
			if !ok {
				t.Fatal("left to the SDK")
			}
			var want sdk.NewSessionRequest
			if err := json.Unmarshal([]byte(c.params), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p, want) {
				t.Errorf("read %#v, the SDK %#v", p, want)
			}
			req := `{"jsonrpc":"2.0","id":7,"method":"session/new","params":` + c.params + "}\n"
			fast := answerOf(t, req, func(in io.Reader, out io.Writer) {
				_ = Serve(context.Background(), in, out, o())
			})
			slow := answerOf(t, req, func(in io.Reader, out io.Writer) {
				a := New(o())
				a.setPeer(&encodingPeer{})
				conn := sdk.NewAgentSideConnection(a, out, in)
				<-conn.Done()
				_ = a.Close()
			})
			if fast != slow {
				t.Errorf("answered\n%s\nthe SDK\n%s", fast, slow)
			}
		})
	}
}

func mode(m host.Mode) func(string) (host.Setup, error) {
	return func(cwd string) (host.Setup, error) {
		return host.Setup{Options: host.Options{SessionDir: filepath.Join(cwd, ".sessions"), Root: cwd, Mode: m}}, nil
	}
}

var sessionIDs = regexp.MustCompile(`\d{8}-\d{6}-[a-z0-9]+`)

// answerOf runs an agent on a pipe pair, sends it req and returns its response
// (to id 7), the session's id in it replaced.
func answerOf(t *testing.T, req string, serve func(io.Reader, io.Writer)) string {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		serve(inR, outW)
		_ = outW.Close()
	}()
	go func() { _, _ = inW.Write([]byte(req)) }()
	r := bufio.NewReader(outR)
	var answer string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		if strings.HasPrefix(line, `{"jsonrpc":"2.0","id":7,`) {
			answer = line
			break
		}
	}
	_ = inW.Close()
	go func() { _, _ = io.Copy(io.Discard, r) }()
	<-done
	return sessionIDs.ReplaceAllString(answer, "ID")
}

// What newSessionParams reads is what the SDK decodes; what it does not know
// the shape of goes to the SDK, which decides.
func TestNewSessionParams(t *testing.T) {
	for _, params := range []string{
		`{"cwd":"/w","mcpServers":[{"name":"fs","command":"mcp-fs","args":["-v"],"env":[{"name":"A","value":"b"}]},{"type":"http","name":"h","url":"http://127.0.0.1:1/","headers":[]}]}`,
		`{"additionalDirectories":[],"cwd":"/w\u003c","mcpServers":[]}`,
	} {
		p, ok := newSessionParams(jsontext.Value(params))
		if !ok {
			t.Fatalf("%s: left to the SDK", params)
		}
		var want sdk.NewSessionRequest
		if err := json.Unmarshal([]byte(params), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(p, want) {
			t.Errorf("read %#v, the SDK %#v", p, want)
		}
	}

	for _, params := range []string{
		``, `null`, `[]`, `{}`, `{"cwd":"/"}`, `{"mcpServers":[]}`, `{"cwd":"","mcpServers":[]}`,
		`{"cwd":"/","mcpServers":null}`, `{"cwd":1,"mcpServers":[]}`, `{"cwd":"/","mcpServers":{}}`,
		`{"CWD":"/","mcpServers":[]}`, `{"cwd":"/","cwd":"/x","mcpServers":[]}`,
		`{"cwd":"/","mcpServers":[],"unknown":true}`, `{"cwd":"/","mcpServers":[],"additionalDirectories":null}`,
		`{"cwd":"/","mcpServers":[],"additionalDirectories":[1]}`, `{"cwd":"/","mcpServers":[],"_meta":[]}`,
		`{"cwd":"/","mcpServers":[{"name":1}]}`, "{\"cwd\":\"/\xff\",\"mcpServers\":[]}",
	} {
		if p, ok := newSessionParams(jsontext.Value(params)); ok {
			t.Errorf("%s: read %#v, want it left to the SDK", params, p)
		}
	}
}
