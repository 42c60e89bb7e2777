package mcp

// The official MCP conformance suite (npm @modelcontextprotocol/conformance)
// runs a client under test once per scenario: it starts a test server, runs
// the client's command with the server's URL appended and the scenario's name
// (and, for some, a JSON context) in the environment, and grades what the
// client did. This file is that client, made of dsh's own MCP client — Start
// with the server as configuration, its tools as the model would get them —
// and the test that runs the suite.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// conformanceEnv makes the test binary the suite's client (TestMain).
const conformanceEnv = "DSH_MCP_CONFORMANCE_CLIENT"

// conformanceClient runs one scenario against the server at url, as a
// session would: the server is started from its configuration, and every
// tool it offers is called once.
func conformanceClient(url string) error {
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	var extra map[string]any
	if c := os.Getenv("MCP_CONFORMANCE_CONTEXT"); c != "" {
		if err := json.Unmarshal([]byte(c), &extra); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	// What a user would put in the server's oauth table: the client the
	// scenario registered beforehand, and where dsh's client metadata
	// document would be published.
	o := &OAuth{ClientMetadataURL: "https://conformance-test.local/client-metadata.json"}
	o.ClientID, _ = extra["client_id"].(string)
	o.ClientSecret, _ = extra["client_secret"].(string)
	o.ClientCredentials = strings.HasPrefix(scenario, "auth/client-credentials-")
	if key, _ := extra["private_key_pem"].(string); key != "" {
		o.PrivateKeyFile = filepath.Join(os.TempDir(), fmt.Sprintf("dsh-conformance-%d.pem", os.Getpid()))
		if err := os.WriteFile(o.PrivateKeyFile, []byte(key), 0o600); err != nil {
			return err
		}
		defer func() { _ = os.Remove(o.PrivateKeyFile) }()
	}
	cfg := ServerConfig{Name: "conformance", Type: "http", URL: url, Trusted: true, OAuth: o}
	s, err := Start(ctx, []ServerConfig{cfg}, Options{ClientVersion: "conformance", ConnectTimeout: 20 * time.Second,
		SignIn: approve})
	if err != nil {
		return err
	}
	defer func() { _ = s.Close() }()
	for _, t := range s.Tools() {
		args := `{}`
		if scenario == "tools_call" {
			args = `{"a":5,"b":3}`
		}
		r, err := t.Run(ctx, tool.Env{Ask: accept, Progress: func(c string) { fmt.Print(c) }}, []byte(args), nil)
		if err != nil {
			return err
		}
		fmt.Printf("%s: error %v: %s\n", t.Name(), r.IsError, r.TextOf())
	}
	return nil
}

// approve stands for the user who opens the sign-in link: the suite's
// authorization server approves at once, so following its redirect brings
// the code back to dsh's loopback listener.
func approve(_, url string) {
	go func() {
		resp, err := http.Get(url) //nolint:gosec // the suite's own loopback server
		if err != nil {
			fmt.Fprintln(os.Stderr, "dsh conformance client: opening the sign-in link:", err)
			return
		}
		_ = resp.Body.Close()
	}()
}

// accept stands for the user who answers a server's question with its
// defaults.
func accept(context.Context, tool.Question) (card.Answer, error) {
	return card.Answer{ID: "accept", Text: "Accept"}, nil
}

// minConformance is the number of the suite's client scenarios dsh must pass.
const minConformance = 24

// conformanceVersion is the suite's release the score is measured with.
const conformanceVersion = "0.1.16"

// TestConformance runs every client scenario of the suite against dsh's
// client and fails under minConformance passed. The suite needs Node 22,
// which npm's node package brings where the system's is older.
func TestConformance(t *testing.T) {
	node := npmBin(t, "node")
	suite := filepath.Join(filepath.Dir(filepath.Dir(node)), "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(suite); err != nil {
		t.Fatalf("the suite is not installed beside node: %v", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// sse-retry grades the reconnection's delay by the wall clock: on a
	// loaded machine a second run settles what a first one missed.
	var passed, failed []string
	var said string
	for try := 0; try < 2 && len(passed) < minConformance; try++ {
		out := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, node, suite, "client", "--command", exe, "--suite", "all", "-o", out)
		cmd.Dir = out
		cmd.Env = append(os.Environ(), conformanceEnv+"=1")
		b, err := cmd.CombinedOutput()
		cancel()
		// The suite exits 1 when any scenario fails; the score is what counts.
		passed, failed = conformanceScore(string(b))
		if len(passed)+len(failed) == 0 {
			t.Fatalf("the suite ran no scenario (%v):\n%s", err, b)
		}
		said = summary(string(b))
		t.Logf("MCP conformance %s: %d of %d client scenarios passed; failing: %s", conformanceVersion,
			len(passed), len(passed)+len(failed), strings.Join(failed, ", "))
	}
	if len(passed) < minConformance {
		t.Errorf("%d of %d passed, want at least %d; the suite said:\n%s", len(passed), len(passed)+len(failed), minConformance, said)
	}
}

var scoreLine = regexp.MustCompile(`(?m)^([✓✗]) (\S+): \d+ passed, \d+ failed`)

// conformanceScore reads the suite's summary: one line per scenario.
func conformanceScore(out string) (passed, failed []string) {
	for _, m := range scoreLine.FindAllStringSubmatch(summary(out), -1) {
		if m[1] == "✓" {
			passed = append(passed, m[2])
		} else if !slices.Contains(failed, m[2]) {
			failed = append(failed, m[2])
		}
	}
	return passed, failed
}

// summary is the suite's closing summary, without the scenarios' logs.
func summary(out string) string {
	if i := strings.LastIndex(out, "=== SUITE SUMMARY ==="); i >= 0 {
		return out[i:]
	}
	return out
}
