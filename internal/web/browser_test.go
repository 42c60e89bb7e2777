package web

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// chromium returns Debian's chromium, or skips the test when it is missing —
// unless DSH_REQUIRE_BROWSER=1 (CI), where a missing browser fails.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	if os.Getenv("DSH_REQUIRE_BROWSER") == "1" {
		t.Fatal("DSH_REQUIRE_BROWSER=1 but /usr/bin/chromium is missing (apt-get install chromium)")
	}
	t.Skip("skipping the browser test: /usr/bin/chromium is missing (apt-get install chromium to run it; " +
		"DSH_REQUIRE_BROWSER=1 makes this a failure)")
	return ""
}

// browser starts a headless chromium with a throwaway profile. It also returns
// a func listing the console errors the pages logged (CSP refusals among them);
// it logs the warnings.
func browser(t *testing.T) (context.Context, func() []string) {
	t.Helper()
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	// Start the browser without a deadline: a timeout on the first Run would end it.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	var mu sync.Mutex
	var problems, warnings []string
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			switch m.Type {
			case chromedp.ConsoleError, chromedp.ConsoleException:
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			case chromedp.ConsoleWarning: // reported, not failed: browsers warn of many things
				mu.Lock()
				warnings = append(warnings, m.String())
				mu.Unlock()
			case chromedp.ConsoleLog, chromedp.ConsoleDebug, chromedp.ConsoleInfo:
			}
		}
	}()
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		for _, w := range warnings {
			t.Logf("browser console: %s", w)
		}
		warnings = nil
		return slices.Clone(problems)
	}
}

// artifacts is where screenshots go: $DSH_ARTIFACTS, or a test temp dir.
func artifacts(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("DSH_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

func screenshot(t *testing.T, ctx context.Context, dir, name string, full bool) {
	t.Helper()
	shot := chromedp.CaptureScreenshot()
	if full {
		shot = chromedp.FullScreenshot(100) // 100: PNG
	}
	b, err := chromedp.Run(ctx, shot)
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
}

// eval runs a script with a deadline.
func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// waitFor polls a predicate in the page until it is true.
func waitFor(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		t.Fatalf("waiting for %s (%s): %v", what, js, err)
	}
}

const (
	demoID   = "20250314-093012-demo0000"
	foldID   = "20250314-093012-fold0000"
	liveID   = "20250314-093013-live0000"
	bigID    = "20250314-093014-big00000"
	failedID = "20250314-093015-fail0000"
)

// TestBrowser opens the web view in a real browser: the list, the demo session
// (run through the agent loop) with every card kind, a folded output expanded by a
// click, a live session whose command output grows while the page is open, and a
// 1000-call session whose load time it reports.
func TestBrowser(t *testing.T) {
	dir := t.TempDir()
	// The server first: cleanups run in reverse, so the browser closes its event
	// streams before the server waits for its connections.
	_, ts := testServer(t, dir)
	ctx, consoleProblems := browser(t)
	shots := artifacts(t)

	demoSession(t, dir)
	fold := newRecorder(t, dir, foldID)
	foldSession(fold)
	fold.log.Close()
	big := bigSession(t, dir, bigID, 1000)
	failed := newRecorder(t, dir, failedID)
	failed.say(session.TypeUser, "Build it.")
	failed.append(session.Record{Type: session.TypeTurnEnd, StopReason: "error", Error: "provider: 529 overloaded"})
	failed.log.Close()
	live := newRecorder(t, dir, liveID)
	live.say(session.TypeUser, "Build it.")
	live.append(session.Record{Type: session.TypeToolCall, CallID: "run", Name: "bash",
		Args: []byte(`{"command":"make all","description":"build"}`)})
	live.append(session.Record{Type: session.TypeProgress, CallID: "run", Chunk: "step 1 <compile>\n"})

	// The list, entered through the URL with the token.
	do(t, ctx, "open the list", chromedp.Navigate(ts.URL+"/?token="+testToken))
	if u := eval[string](t, ctx, `location.href`); strings.Contains(u, "token") {
		t.Errorf("the token stays in the address bar: %s", u)
	}
	rows := eval[[]string](t, ctx, `[...document.querySelectorAll('tr[data-session]')].map(r => r.dataset.session + ' ' + r.querySelector('.badge').textContent)`)
	if !slices.Contains(rows, liveID+" running") || !slices.Contains(rows, demoID+" finished") ||
		!slices.Contains(rows, failedID+" failed") || len(rows) != 5 {
		t.Errorf("session list rows %q", rows)
	}
	screenshot(t, ctx, shots, "list.png", false)

	t.Run("every card", func(t *testing.T) {
		do(t, ctx, "open the demo session", chromedp.Navigate(ts.URL+"/s/"+demoID), chromedp.WaitReady(chromedp.CSS("#end")))
		// Every kind is on the page and takes room (rendered, not hidden).
		kinds := eval[[]string](t, ctx, `[...new Set([...document.querySelectorAll('[data-card]')]
			.filter(e => e.getBoundingClientRect().height > 0).map(e => e.dataset.card))].sort()`)
		for _, want := range []string{"diff-call", "diff-result", "generic-call", "generic-result", "read-result",
			"terminal-call", "terminal-result"} {
			if !slices.Contains(kinds, want) {
				t.Errorf("the demo page shows no %s card (it shows %q)", want, kinds)
			}
		}
		items := eval[[]string](t, ctx, `[...new Set([...document.querySelectorAll('[data-item]')].map(e => e.dataset.item))].sort()`)
		if !slices.Equal(items, []string{"assistant", "thinking", "tool", "turn-end", "user"}) {
			t.Errorf("items %q", items)
		}
		checks := map[string]string{
			"every read gutter starts at its first line": `[...document.querySelectorAll('[data-card="read-result"]')].every(c =>
				c.querySelector('.lnt')?.textContent.trim() === c.querySelector('.range').textContent.match(/lines (\d+)/)[1])`,
			"read cards are highlighted": `document.querySelectorAll('[data-card="read-result"] .chroma .k').length > 0`,
			"highlight colours apply": `getComputedStyle(document.querySelector('[data-card="read-result"] .chroma .k')).color !==
				getComputedStyle(document.querySelector('[data-card="read-result"] .chroma .n, [data-card="read-result"] .chroma .nx, [data-card="read-result"] .chroma .cl')).color`,
			"diffs have old and new line numbers": `[...document.querySelectorAll('[data-card="diff-result"] tr.del td.n')].some(td => /^\d+$/.test(td.textContent))`,
			"a created file is whole":             `[...document.querySelectorAll('[data-card="diff-result"] .badge.new')].length >= 1`,
			"diffs count their lines":             `[...document.querySelectorAll('[data-card="diff-result"] .stat')].every(s => /^\+\d+ −\d+$/.test(s.textContent))`,
			"exit badges":                         `document.querySelector('.status .badge.ok') !== null && document.querySelector('.status .badge.fail') !== null`,
			"the todo list shows once":            `document.querySelector('[data-tool="todo_write"]') !== null && document.querySelector('.plan') === null`,
			"markdown is rendered":                `document.querySelector('.msg.user .md p') !== null && document.querySelector('.msg.assistant .md') !== null`,
			"one script, ours":                    `document.scripts.length === 1 && document.scripts[0].src.endsWith('/static/app.js')`,
			"a finished page does not follow":     `document.getElementById('conn') === null && document.querySelector('.badge.state').textContent === 'finished'`,
			"the page is styled from /static/":    `getComputedStyle(document.querySelector('.tool')).borderTopStyle === 'solid'`,
			"diff lines are coloured":             `getComputedStyle(document.querySelector('tr.ins')).backgroundColor !== getComputedStyle(document.body).backgroundColor`,
		}
		for what, js := range checks {
			waitFor(t, ctx, what, js)
		}
		screenshot(t, ctx, shots, "demo.png", true)
	})

	t.Run("expand a folded output", func(t *testing.T) {
		do(t, ctx, "open a session with a long output", chromedp.Navigate(ts.URL+"/s/"+foldID), chromedp.WaitReady(chromedp.CSS("#end")))
		if n := eval[int](t, ctx, `document.querySelectorAll('[data-card="raw-result"]').length`); n != 1 {
			t.Errorf("%d raw results, want the failed read's", n)
		}
		const card = `document.querySelector('[data-tool="bash"] [data-card="terminal-result"]')`
		if eval[bool](t, ctx, card+`.textContent.includes("\n50\n")`) {
			t.Fatal("the folded output already shows line 50")
		}
		do(t, ctx, "click the fold", chromedp.Click(chromedp.CSS(`[data-tool="bash"] details.more > summary`)))
		waitFor(t, ctx, "the whole output", `document.querySelector('[data-unfolded="true"] [data-card="terminal-result"]')?.textContent.includes("\n50\n")`)
		if n := eval[int](t, ctx, `document.querySelectorAll('[data-unfolded="true"]').length`); n != 1 {
			t.Errorf("%d unfolded cards, want 1", n)
		}
		screenshot(t, ctx, shots, "expanded.png", false)

		// A long message is clamped until its control is opened.
		const md = `document.querySelector('.msg.long .md')`
		if !eval[bool](t, ctx, md+`.clientHeight < `+md+`.scrollHeight`) {
			t.Error("the long message is not clamped")
		}
		do(t, ctx, "unclamp", chromedp.Click(chromedp.CSS(`.msg.long details.unclamp > summary`)))
		waitFor(t, ctx, "the whole message", md+`.clientHeight === `+md+`.scrollHeight`)
	})

	t.Run("a failed session", func(t *testing.T) {
		do(t, ctx, "open the failed session", chromedp.Navigate(ts.URL+"/s/"+failedID), chromedp.WaitReady(chromedp.CSS("#end")))
		waitFor(t, ctx, "the failed state and its error", `document.querySelector('.badge.state.failed')?.textContent === 'failed' &&
			document.querySelector('pre.state-error').textContent === 'provider: 529 overloaded' && document.getElementById('conn') === null`)
		screenshot(t, ctx, shots, "failed.png", false)
	})

	t.Run("live output grows", func(t *testing.T) {
		do(t, ctx, "open the live session", chromedp.Navigate(ts.URL+"/s/"+liveID))
		waitFor(t, ctx, "the stream", `document.getElementById('conn').dataset.state === 'live'`)
		const out = `document.querySelector('#c-run .progress').textContent`
		waitFor(t, ctx, "the output so far", out+` === "step 1 <compile>\n"`)
		for i := 2; i <= 4; i++ {
			chunk := fmt.Sprintf("step %d <link>\n", i)
			live.append(session.Record{Type: session.TypeProgress, CallID: "run", Chunk: chunk})
			waitFor(t, ctx, "chunk "+chunk, out+fmt.Sprintf(`.endsWith(%q)`, chunk))
		}
		if s := eval[string](t, ctx, out); s != "step 1 <compile>\nstep 2 <link>\nstep 3 <link>\nstep 4 <link>\n" {
			t.Errorf("live output %q", s)
		}
		screenshot(t, ctx, shots, "live-running.png", false)
		// The result replaces the running call; a new message follows.
		res := res(live.reg.Run(t.Context(), tool.Env{Session: live.tools}, "bash", []byte(`{"command":"echo built; exit 2"}`), nil))
		live.append(session.Record{Type: session.TypeToolResult, CallID: "run", Result: &res})
		live.say(session.TypeAssistant, "The build **failed**.")
		waitFor(t, ctx, "the result card", `document.querySelector('#c-run [data-card="terminal-result"]')?.textContent.includes("built")`)
		waitFor(t, ctx, "the new message", `document.querySelector('.msg.assistant:last-of-type strong')?.textContent === "failed"`)
		if eval[bool](t, ctx, `!!document.querySelector('#c-run .progress')`) {
			t.Error("the running output stayed after the result")
		}
		if s := eval[string](t, ctx, `document.querySelector('#c-run').dataset.state`); s != "failed" {
			t.Errorf("call state %q after exit 2", s)
		}
		screenshot(t, ctx, shots, "live-done.png", false)
		// Reloading shows the same cards the live page built.
		liveCards := eval[string](t, ctx, `[...document.querySelectorAll('[data-card],[data-item]')].map(e => e.dataset.card || e.dataset.item).join()`)
		do(t, ctx, "reload", chromedp.Reload())
		if again := eval[string](t, ctx, `[...document.querySelectorAll('[data-card],[data-item]')].map(e => e.dataset.card || e.dataset.item).join()`); again != liveCards {
			t.Errorf("live page %s\nreloaded  %s", liveCards, again)
		}
	})

	t.Run("1000 calls", func(t *testing.T) {
		do(t, ctx, "open the 1000-call session", chromedp.Navigate(ts.URL+"/s/"+bigID), chromedp.WaitReady(chromedp.CSS("#end")))
		n := eval[int](t, ctx, `document.querySelectorAll('article[data-item="tool"]').length`)
		if n != big {
			t.Errorf("the page shows %d calls, want %d", n, big)
		}
		timing := eval[map[string]float64](t, ctx, `(() => { const n = performance.getEntriesByType('navigation')[0];
			return {dcl: n.domContentLoadedEventEnd - n.startTime, load: n.loadEventEnd - n.startTime,
				response: n.responseEnd - n.startTime, bytes: n.transferSize}; })()`)
		msg := fmt.Sprintf("web: %d-call session loaded in %.0fms (DOMContentLoaded %.0fms, HTML received %.0fms, %.0f KB%s)",
			n, timing["load"], timing["dcl"], timing["response"], timing["bytes"]/1024, raceNote)
		t.Log(msg)
		fmt.Println(msg)
		screenshot(t, ctx, shots, "1000-calls.png", false)
	})

	if p := consoleProblems(); len(p) > 0 {
		t.Errorf("the pages logged errors (a CSP refusal, a script error):\n%s", strings.Join(p, "\n"))
	}
}

// foldSession records a session whose command output is long enough to fold, a
// long message, and a call that fails without a rich view.
func foldSession(r *recorder) {
	r.t.Helper()
	r.say(session.TypeUser, "Fix the **greeting** and add a changelog. The log:\n\n"+strings.Repeat("- a line of the log\n", 80))
	r.say(session.TypeThinking, "Read first, then edit.")
	r.call("todo_write", map[string]any{"todos": []map[string]any{
		{"content": "Fix the greeting", "status": "in_progress", "priority": "high"},
		{"content": "Add a changelog", "status": "pending"},
	}})
	r.file("greet.py", "import sys\n\ndef greet(name):\n    return \"Hello \" + name\n\n\nprint(greet(sys.argv[1]))\n")
	r.call("read", map[string]any{"path": "greet.py", "offset": 3})
	r.call("edit", map[string]any{"path": "greet.py", "old_string": `    return "Hello " + name`, "new_string": `    return f"Hello, {name}!"`})
	r.call("write", map[string]any{"path": "CHANGELOG.md", "content": "# Changelog\n\n- Fix the greeting.\n"})
	r.call("bash", map[string]any{"command": "seq 1 100", "description": "count"})
	r.call("bash", map[string]any{"command": "echo oops >&2; exit 3"})
	r.call("read", map[string]any{"path": "missing.txt"})
	r.say(session.TypeAssistant, "Done: the greeting is fixed.")
	r.append(session.Record{Type: session.TypeTurnEnd, StopReason: "end_turn", Usage: &session.Usage{InputTokens: 1200, OutputTokens: 80}})
}

// bigSession writes a session of n tool calls, a realistic mix whose results come
// from running the real tools once: reads of a source file (folded, highlighted),
// edits, a created file, commands with short and long output, a todo list and a
// failing call. Each call has its own id. It returns n.
func bigSession(t testing.TB, dir, id string, n int) int {
	t.Helper()
	src := newRecorder(t, t.TempDir(), "20250101-000000-template")
	var code strings.Builder
	code.WriteString("package big\n\nimport \"fmt\"\n\n")
	for i := range 150 {
		fmt.Fprintf(&code, "// F%d prints its number.\nfunc F%d() { fmt.Println(%d) }\n\n", i, i, i)
	}
	src.file("big.go", code.String())
	src.call("read", map[string]any{"path": "big.go"})
	src.call("edit", map[string]any{"path": "big.go", "old_string": "func F7() { fmt.Println(7) }", "new_string": "func F7() { fmt.Println(\"seven\") }"})
	src.call("bash", map[string]any{"command": "ls -la && wc -l big.go"})
	src.call("bash", map[string]any{"command": "seq 1 300"})
	src.call("write", map[string]any{"path": "notes.md", "content": "# Notes\n\n- one\n- two\n"})
	src.call("todo_write", map[string]any{"todos": []map[string]any{{"content": "Refactor", "status": "in_progress"}}})
	src.call("read", map[string]any{"path": "nope.go"})
	src.call("bash", map[string]any{"command": "go vet ./... 2>&1 | head -5; exit 1"})
	recs, err := session.ReadFile(src.log.Path())
	if err != nil {
		t.Fatal(err)
	}
	type pair struct{ call, result session.Record }
	var calls []pair
	byID := map[string]int{}
	for _, r := range recs {
		switch r.Type {
		case session.TypeToolCall:
			byID[r.CallID] = len(calls)
			calls = append(calls, pair{call: r})
		case session.TypeToolResult:
			calls[byID[r.CallID]].result = r
		case session.TypeHeader, session.TypeUser, session.TypeAssistant, session.TypeThinking, session.TypeProgress,
			session.TypePlan, session.TypeTurnEnd, session.TypeMode, session.TypeAllow, session.TypeCompaction,
			session.TypeInstructions, session.TypeDamaged, session.TypeModel, session.TypeCheckpoint, session.TypeRestore, session.TypeHook,
			session.TypeCommand, session.TypeReply, session.TypeDecision, session.TypeTitle:
		}
	}
	log, err := session.Create(dir, id, src.root, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	add := func(r session.Record) {
		if err := log.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	add(session.Record{Type: session.TypeUser, Text: "Refactor the big package."})
	for i := range n {
		if i%10 == 0 {
			add(session.Record{Type: session.TypeAssistant, Text: fmt.Sprintf("Step %d: continuing with `big.go`.", i/10+1)})
		}
		p := calls[i%len(calls)]
		callID := fmt.Sprintf("toolu_%05d", i)
		c, r := p.call, p.result
		c.CallID, r.CallID, c.Time, r.Time = callID, callID, time.Time{}, time.Time{}
		add(c)
		add(r)
	}
	add(session.Record{Type: session.TypeTurnEnd, StopReason: "end_turn"})
	return n
}
