package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestWebDrivesSessionsE2E runs the real binary's dsh web with a scripted
// provider: a session started from the page in a directory under --dir runs a
// prompt whose write waits for the page's answer, allowed over HTTP; a
// project whose settings wait for trust is asked about first (409) and opens
// with its settings once trusted; a directory outside --dir is refused.
func TestWebDrivesSessionsE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "dsh")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/dsh-dev/dsh/cmd/dsh").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	root := filepath.Join(tmp, "work")
	ws, proj := filepath.Join(root, "ws"), filepath.Join(root, "proj")
	for _, d := range []string{ws, filepath.Join(proj, ".dsh")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(ws, "README"), "hi\n")
	writeFile(t, filepath.Join(proj, ".dsh", "config.toml"), "mode = \"bypass\"\n")
	script := filepath.Join(tmp, "script.json")
	writeFile(t, script, `{"turns": [
		{"tool_calls": [{"name": "write", "args": {"path": "out.txt", "content": "from the web\n"}}]},
		{"text": "Written."}]}`)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "web", "--provider", "script", "--script", script, "--dir", root)
	cmd.Dir = tmp
	cmd.Env = []string{"HOME=" + filepath.Join(tmp, "home"), "XDG_CONFIG_HOME=" + filepath.Join(tmp, "xdg"),
		"XDG_STATE_HOME=" + filepath.Join(tmp, "state"), "PATH=" + os.Getenv("PATH"), "NO_COLOR=1"}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil {
			t.Errorf("dsh web: %v\n%s", err, stderr.String())
		}
	}()
	sc := bufio.NewScanner(stdout)
	var u string
	for u == "" && sc.Scan() {
		u = webURL.FindString(sc.Text())
	}
	if u == "" {
		t.Fatalf("no URL printed: %s", stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	base := u[:strings.Index(u, "/?")]
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	if resp, err := c.Get(u); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET the printed URL: %v %v", resp, err)
	}
	post := func(path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+path, strings.NewReader(body))
		req.Header.Set("Origin", base)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	idRE := regexp.MustCompile(`"id":"([a-z0-9-]+)"`)

	if code, body := post("/new", `{"dir": "`+tmp+`"}`); code != http.StatusForbidden {
		t.Errorf("a directory outside --dir: %d %s", code, body)
	}
	code, body := post("/new", `{"dir": "`+ws+`"}`)
	if code != http.StatusOK {
		t.Fatalf("POST /new: %d %s", code, body)
	}
	id := idRE.FindStringSubmatch(body)[1]
	control := sse(t, ctx, c, base+"/s/"+id+"/control")
	records := sse(t, ctx, c, base+"/s/"+id+"/events?from=0")
	if code, body := post("/s/"+id+"/input", `{"text": "write out.txt"}`); code != http.StatusAccepted {
		t.Fatalf("input: %d %s", code, body)
	}
	key := waitData(t, ctx, control, regexp.MustCompile(`data-ask="([a-z0-9]+)"[^>]*>.*data-decision="allow_once"`))
	if code, body := post("/s/"+id+"/answer/"+key, `{"decision": "allow_once"}`); code != http.StatusNoContent {
		t.Fatalf("answer: %d %s", code, body)
	}
	waitData(t, ctx, records, regexp.MustCompile(`data-item="turn-end" data-stop="(end_turn)"`))
	if b, err := os.ReadFile(filepath.Join(ws, "out.txt")); err != nil || string(b) != "from the web\n" {
		t.Errorf("out.txt: %q %v", b, err)
	}

	// The project's settings wait for trust: asked on the page, then applied.
	code, body = post("/new", `{"dir": "`+proj+`"}`)
	if code != http.StatusConflict || !strings.Contains(body, `"trust"`) || !strings.Contains(body, "mode ignored") {
		t.Fatalf("an undecided project: %d %s", code, body)
	}
	code, body = post("/new", `{"dir": "`+proj+`", "trust": true}`)
	if code != http.StatusOK {
		t.Fatalf("trusted: %d %s", code, body)
	}
	pid := idRE.FindStringSubmatch(body)[1]
	resp, err := c.Get(base + "/s/" + pid)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), `data-mode="bypass"`) {
		t.Errorf("the trusted project's session is not in its mode (bypass)")
	}
	if code, body := post("/new", `{"dir": "`+proj+`"}`); code != http.StatusOK {
		t.Errorf("asked again once answered: %d %s", code, body)
	}
}

// sse streams the data lines of the server-sent events at u.
func sse(t *testing.T, ctx context.Context, c *http.Client, u string) <-chan string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := c.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %v %v", u, resp, err)
	}
	ch := make(chan string, 100)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				ch <- d
			}
		}
	}()
	return ch
}

// waitData waits for a data line matching re and returns its first group.
func waitData(t *testing.T, ctx context.Context, ch <-chan string, re *regexp.Regexp) string {
	t.Helper()
	for {
		select {
		case d, ok := <-ch:
			if !ok {
				t.Fatalf("the stream ended before %s", re)
			}
			if m := re.FindStringSubmatch(d); m != nil {
				return m[1]
			}
		case <-ctx.Done():
			t.Fatalf("nothing matched %s", re)
		}
	}
}
