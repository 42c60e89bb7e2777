package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/dsh-dev/dsh/internal/sandbox"
)

// TestLSPScripts runs the scripts in testdata/lspscript: language servers as
// a hostile repository would use them, on the real command line. The
// stand-in rustup proxy of the scripts is first on PATH and its home is
// $WORK/rustup; gopls is $GOPLS (from .ci/run, see serverBin); [sandbox] says
// the kernel can confine commands.
func TestLSPScripts(t *testing.T) {
	gopls := os.Getenv("DSH_TEST_GO")
	if gopls == "" {
		home, _ := os.UserHomeDir()
		gopls = filepath.Join(home, ".cache", "dsh-test-go")
	}
	gopls = filepath.Join(gopls, "bin", "gopls")
	if _, err := os.Stat(gopls); err != nil && os.Getenv("DSH_REQUIRE_LSP") == "1" {
		t.Fatal("gopls is not installed: " + gopls)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/lspscript",
		Setup: func(e *testscript.Env) error {
			e.Setenv("XDG_STATE_HOME", e.WorkDir+"/state")
			e.Setenv("NO_COLOR", "1")
			e.Setenv("HOME", e.WorkDir+"/home")
			e.Setenv("RUSTUP_HOME", e.WorkDir+"/rustup")
			e.Setenv("RUSTUP_TOOLCHAIN", "")
			e.Setenv("GOPLS", gopls)
			e.Setenv("PATH", e.WorkDir+"/cargo/bin"+string(os.PathListSeparator)+os.Getenv("PATH"))
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "sandbox":
				return sandbox.Check(sandbox.On) == nil, nil
			case "gopls":
				_, err := os.Stat(gopls)
				return err == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}

// lspStub is a language server for the scripts (dsh-lspstub): it answers
// initialize and shutdown, and for every text it is given publishes one
// error, "stub: problem", followed by $DSH_STUB_PAD bytes of padding. With
// $DSH_STUB_REPORT set it writes there where it runs, the rootUri it got and
// the tsserver it was told to use.
func lspStub() int {
	in := bufio.NewReader(os.Stdin)
	pad, _ := strconv.Atoi(os.Getenv("DSH_STUB_PAD"))
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Printf("Content-Length: %d\r\n\r\n%s", len(b), b)
	}
	for {
		n := -1
		for {
			line, err := in.ReadString('\n')
			if err != nil {
				return 1
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				n, _ = strconv.Atoi(v)
			}
		}
		body := make([]byte, max(n, 0))
		if _, err := io.ReadFull(in, body); err != nil {
			return 1
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				RootURI string `json:"rootUri"`
				Init    struct {
					Tsserver struct {
						Path string `json:"path"`
					} `json:"tsserver"`
				} `json:"initializationOptions"`
				TextDocument struct {
					URI     string `json:"uri"`
					Version int    `json:"version"`
				} `json:"textDocument"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) != nil {
			return 1
		}
		switch msg.Method {
		case "initialize":
			if p := os.Getenv("DSH_STUB_REPORT"); p != "" {
				cwd, _ := os.Getwd()
				_ = os.WriteFile(p, fmt.Appendf(nil, "cwd=%s\nrootUri=%s\ntsserver=%s\n", cwd, msg.Params.RootURI, msg.Params.Init.Tsserver.Path), 0o644)
			}
			send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": map[string]any{"capabilities": map[string]any{"textDocumentSync": 1}}})
		case "shutdown":
			send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": nil})
		case "exit":
			return 0
		case "textDocument/didOpen", "textDocument/didChange":
			at := map[string]any{"line": 0, "character": 0}
			send(map[string]any{"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": map[string]any{
				"uri": msg.Params.TextDocument.URI, "version": msg.Params.TextDocument.Version,
				"diagnostics": []any{map[string]any{"range": map[string]any{"start": at, "end": at}, "severity": 1,
					"source": "stub", "message": "stub: problem" + strings.Repeat("x", pad)}}}})
		}
	}
}
