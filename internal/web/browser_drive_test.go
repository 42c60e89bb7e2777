package web

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserDrives drives a session from a real browser: it starts one from
// the list, sends a prompt with an image attached (the scripted model writes a
// file), allows the write from the box the page shows, undoes it (allowing the
// undo's diff), then sends a prompt whose model never finishes and cancels it.
func TestBrowserDrives(t *testing.T) {
	d := driveServer(t, `{"turns": [
		{"text": "Writing it.", "tool_calls": [{"id": "w1", "name": "write", "args": {"path": "hello.txt", "content": "hello from the browser\n"}}]},
		{"text": "Done: **hello.txt** is written."},
		{"text": "Thinking for ever…", "wait_for_cancel": true}
	]}`)
	ctx, consoleProblems := browser(t)
	shots := artifacts(t)
	pic := filepath.Join(t.TempDir(), "dot.png")
	writePNG(t, pic)

	do(t, ctx, "open the list", chromedp.Navigate(d.ts.URL+"/?token="+testToken), chromedp.WaitReady(chromedp.CSS("#new-session")))
	if v := eval[string](t, ctx, `document.querySelector('#new-session input[name="dir"]').value`); v != d.srv.roots[0] {
		t.Errorf("the form offers %q, want the root %q", v, d.srv.roots[0])
	}
	do(t, ctx, "start a session", chromedp.Click(chromedp.CSS(`#new-session button[type="submit"]`)))
	waitNavigated(t, ctx, "the session's page with its composer", `location.pathname.startsWith('/s/') && document.getElementById('composer') !== null`)
	waitFor(t, ctx, "the log followed", `document.getElementById('conn')?.dataset.state === 'live'`)
	waitFor(t, ctx, "the status", `document.getElementById('status')?.dataset.state === 'idle'`)

	t.Run("a prompt and its approval", func(t *testing.T) {
		do(t, ctx, "type and attach",
			chromedp.SendKeys(chromedp.CSS(`#composer textarea`), "write hello.txt"),
			chromedp.SetUploadFiles(chromedp.CSS(`#composer input[type="file"]`), []string{pic}),
			chromedp.Click(chromedp.CSS(`#composer [data-action="send"]`)))
		waitFor(t, ctx, "the permission box", `document.querySelector('#asks .ask [data-decision="allow_once"]') !== null`)
		if !eval[bool](t, ctx, `document.querySelector('#asks .ask [data-card="diff-call"]')?.textContent.includes('hello from the browser')`) {
			t.Error("the box does not show the write's diff")
		}
		screenshot(t, ctx, shots, "drive-ask.png", false)
		do(t, ctx, "allow once", chromedp.Click(chromedp.CSS(`#asks [data-decision="allow_once"]`)))
		waitFor(t, ctx, "the turn's end", `document.querySelector('[data-item="turn-end"][data-stop="end_turn"]') !== null`)
		waitFor(t, ctx, "idle again", `document.getElementById('status').dataset.state === 'idle'`)
		waitFor(t, ctx, "the box gone", `document.querySelector('#asks .ask') === null`)
		waitFor(t, ctx, "the prompt with its image", `document.querySelector('.msg.user img.image, .msg.user img') !== null`)
		waitFor(t, ctx, "the write's result card", `document.querySelector('[data-tool="write"] [data-card="diff-result"]') !== null`)
		if b, err := os.ReadFile(filepath.Join(d.root, "hello.txt")); err != nil || string(b) != "hello from the browser\n" {
			t.Fatalf("hello.txt: %q %v", b, err)
		}
		screenshot(t, ctx, shots, "drive-done.png", true)
	})

	t.Run("undo", func(t *testing.T) {
		do(t, ctx, "undo", chromedp.Click(chromedp.CSS(`#composer [data-command="/undo"]`)))
		waitFor(t, ctx, "the undo's box with its diff", `document.querySelector('#asks .ask')?.textContent.includes('hello from the browser')`)
		do(t, ctx, "allow the undo", chromedp.Click(chromedp.CSS(`#asks [data-decision="allow_once"]`)))
		waitFor(t, ctx, "the restore card", `document.querySelector('[id^="restore-"] [data-card="diff-result"]') !== null`)
		if _, err := os.Stat(filepath.Join(d.root, "hello.txt")); !os.IsNotExist(err) {
			t.Errorf("hello.txt after the undo: %v", err)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		do(t, ctx, "send", chromedp.SendKeys(chromedp.CSS(`#composer textarea`), "think"),
			chromedp.Click(chromedp.CSS(`#composer [data-action="send"]`)))
		waitFor(t, ctx, "the turn working", `document.getElementById('status').dataset.state === 'working'`)
		do(t, ctx, "cancel", chromedp.Click(chromedp.CSS(`#composer [data-action="cancel"]`)))
		waitFor(t, ctx, "the cancelled turn", `document.querySelector('[data-item="turn-end"][data-stop="cancelled"]') !== null`)
		waitFor(t, ctx, "idle again", `document.getElementById('status').dataset.state === 'idle'`)
		screenshot(t, ctx, shots, "drive-cancelled.png", false)
	})

	t.Run("switch the mode", func(t *testing.T) {
		do(t, ctx, "choose plan", chromedp.SetValue(chromedp.CSS(`#composer select[name="mode"]`), "plan"))
		eval[bool](t, ctx, `document.querySelector('#composer select[name="mode"]').dispatchEvent(new Event('change'))`)
		waitFor(t, ctx, "the status in plan mode", `document.getElementById('status').dataset.mode === 'plan'`)
	})

	if p := consoleProblems(); len(p) > 0 {
		t.Errorf("the pages logged errors:\n%s", strings.Join(p, "\n"))
	}
}

// waitNavigated is waitFor across a navigation the page starts itself, which
// ends a poll in the page it leaves.
func waitNavigated(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	for range 3 {
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := chromedp.Run(pctx, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingInterval(50*time.Millisecond)))
		cancel()
		if err == nil {
			return
		}
		if msg := err.Error(); !strings.Contains(msg, "navigated") && !strings.Contains(msg, "Cannot find context") {
			t.Fatalf("waiting for %s (%s): %v", what, js, err)
		}
	}
	t.Fatalf("waiting for %s: navigated away three times", what)
}

// writePNG writes a small PNG the page attaches.
func writePNG(t *testing.T, path string) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
