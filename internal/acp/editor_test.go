package acp_test

import (
	"bytes"
	"encoding/base64"
	"github.com/dsh-dev/dsh/internal/attach"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/session"
)

// option returns the config option id of a response, and its values.
func option(t *testing.T, opts []sdk.SessionConfigOption, id string) (current string, values []string) {
	t.Helper()
	for _, o := range opts {
		if o.Select != nil && string(o.Select.Id) == id {
			for _, v := range *o.Select.Options.Ungrouped {
				values = append(values, string(v.Value))
			}
			return string(o.Select.CurrentValue), values
		}
	}
	t.Fatalf("no config option %q", id)
	return "", nil
}

func records(t *testing.T, c *client, id sdk.SessionId) []session.Record {
	t.Helper()
	recs, err := session.ReadFile(filepath.Join(c.sessionDir, string(id)+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return withoutCheckpoints(recs)
}

// withoutCheckpoints drops the workspace snapshots logged around each prompt,
// for tests about what a turn logged.
func withoutCheckpoints(recs []session.Record) []session.Record {
	return slices.DeleteFunc(recs, func(r session.Record) bool { return r.Type == session.TypeCheckpoint })
}

// TestHistory lists sessions newest first, of one cwd or all, with titles from
// their first prompts (sent as session_info_update too); sessions never
// prompted are left out. A listed session is resumed in a new process without
// replay and goes on in its log.
func TestHistory(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	c := start(t, options{sessionDir: dir, script: script(t, turn{Text: "One."}, turn{Text: "Two."}, turn{Text: "Three."})})
	first := c.newSession()
	c.mustPrompt(first, "Fix the parser\nIt breaks on empty input.", sdk.StopReasonEndTurn)
	second := c.newSession()
	c.mustPrompt(second, "Write the changelog", sdk.StopReasonEndTurn)
	c.newSession() // never prompted
	resp, err := c.conn.NewSession(c.ctx(), sdk.NewSessionRequest{Cwd: other, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	c.announced(resp.SessionId)
	c.mustPrompt(resp.SessionId, "Elsewhere", sdk.StopReasonEndTurn)

	from := c.mark()
	mine, err := c.conn.ListSessions(c.ctx(), sdk.ListSessionsRequest{Cwd: sdk.Ptr(c.cwd)})
	if err != nil {
		t.Fatalf("session/list: %v", err)
	}
	var got []string
	for _, s := range mine.Sessions {
		got = append(got, string(s.SessionId)+" "+title(s.Title))
		if s.UpdatedAt == nil || s.Cwd != c.cwd {
			t.Errorf("session %s: cwd %q, updatedAt %v", s.SessionId, s.Cwd, s.UpdatedAt)
		}
	}
	want := []string{string(second) + " Write the changelog", string(first) + " Fix the parser"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || mine.NextCursor != nil {
		t.Errorf("session/list for the cwd = %q (next %v), want %q", got, mine.NextCursor, want)
	}
	all, err := c.conn.ListSessions(c.ctx(), sdk.ListSessionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Sessions) != 3 || all.Sessions[0].SessionId != resp.SessionId {
		t.Errorf("session/list of every cwd = %+v, want 3, the other cwd's first", all.Sessions)
	}
	if _, err := c.conn.ListSessions(c.ctx(), sdk.ListSessionsRequest{Cursor: sdk.Ptr("garbage")}); err == nil {
		t.Error("session/list took a cursor it never gave")
	}
	listed := c.transcript(from, second, first, resp.SessionId)
	for i := range listed {
		listed[i] = strings.ReplaceAll(listed[i], other, "{{other}}")
	}
	golden(t, "history-list", listed)
	c.close()

	again := start(t, options{sessionDir: dir, cwd: c.cwd, script: script(t, turn{Text: "Resumed."})})
	from = again.mark()
	r, err := again.conn.ResumeSession(again.ctx(), sdk.ResumeSessionRequest{SessionId: first, Cwd: again.cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/resume: %v", err)
	}
	if r.Modes == nil || len(r.ConfigOptions) != 3 {
		t.Errorf("session/resume answered %+v", r)
	}
	again.mustPrompt(first, "And the tests?", sdk.StopReasonEndTurn)
	golden(t, "history-resume", again.transcript(from, first))
	for _, l := range again.out.all()[from:] {
		if strings.Contains(l, "Fix the parser") {
			t.Errorf("session/resume replayed the history: %s", l)
		}
	}
	recs := records(t, again, first)
	if last := recs[len(recs)-2]; last.Type != session.TypeAssistant || last.Text != "Resumed." {
		t.Errorf("the resumed turn logged %+v", last)
	}
	if _, err := again.conn.ResumeSession(again.ctx(), sdk.ResumeSessionRequest{SessionId: "20990101-000000-nosuchid", Cwd: again.cwd}); err == nil {
		t.Error("session/resume of an unknown session succeeded")
	}
}

// TestConfigOptions changes the model, the thinking level and the mode through
// session/set_config_option; each change is logged, announced with
// config_option_update (and current_mode_update), and kept by a reload.
func TestConfigOptions(t *testing.T) {
	dir := t.TempDir()
	c := start(t, options{mode: "default", sessionDir: dir, script: script(t, turn{Text: "Fine."})})
	resp, err := c.conn.NewSession(c.ctx(), sdk.NewSessionRequest{Cwd: c.cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.SessionId
	c.announced(id)
	if cur, values := option(t, resp.ConfigOptions, "model"); cur != "script" || !strings.Contains(strings.Join(values, " "), "claude-haiku-4-5") {
		t.Errorf("model option: current %q of %q", cur, values)
	}
	from := c.mark()
	set := func(opt, value string) ([]sdk.SessionConfigOption, error) {
		r, err := c.conn.SetSessionConfigOption(c.ctx(), sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
			SessionId: id, ConfigId: sdk.SessionConfigId(opt), Value: sdk.SessionConfigValueId(value)}})
		return r.ConfigOptions, err
	}
	for _, tc := range []struct{ opt, value string }{{"model", "claude-haiku-4-5"}, {"thinking", "high"}, {"mode", "read-only"}} {
		opts, err := set(tc.opt, tc.value)
		if err != nil {
			t.Fatalf("set %s: %v", tc.opt, err)
		}
		if cur, _ := option(t, opts, tc.opt); cur != tc.value {
			t.Errorf("after setting %s to %s it is %s", tc.opt, tc.value, cur)
		}
	}
	for _, bad := range [][2]string{{"model", "no-such-model"}, {"thinking", "lots"}, {"mode", "yolo"}, {"colour", "red"}} {
		if _, err := set(bad[0], bad[1]); err == nil {
			t.Errorf("set %s to %s succeeded", bad[0], bad[1])
		}
	}
	if _, err := c.conn.SetSessionMode(c.ctx(), sdk.SetSessionModeRequest{SessionId: id, ModeId: "accept-edits"}); err != nil {
		t.Fatalf("session/set_mode: %v", err)
	}
	golden(t, "config-options", c.transcript(from, id))
	var models []string
	for _, r := range records(t, c, id) {
		if r.Type == session.TypeModel {
			models = append(models, r.Model+"/"+r.Thinking)
		}
	}
	if strings.Join(models, " ") != "claude-haiku-4-5/ claude-haiku-4-5/high" {
		t.Errorf("model records = %q", models)
	}
	c.close()

	again := start(t, options{sessionDir: dir, cwd: c.cwd, script: script(t, turn{Text: "Fine."})})
	l, err := again.conn.LoadSession(again.ctx(), sdk.LoadSessionRequest{SessionId: id, Cwd: again.cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	for opt, want := range map[string]string{"model": "claude-haiku-4-5", "thinking": "high", "mode": "accept-edits"} {
		if cur, _ := option(t, l.ConfigOptions, opt); cur != want {
			t.Errorf("reloaded %s = %s, want %s", opt, cur, want)
		}
	}
}

// TestCommands offers the editor's slash commands with the project's custom
// ones, and runs them when sent as prompts: a custom one becomes its prompt,
// /mode and /model change the setting, /cost answers with the usage, /compact
// says whether it can.
func TestCommands(t *testing.T) {
	cwd := evenDir(t) // the usage after /compact counts the system prompt, which holds it
	cmdDir := filepath.Join(cwd, ".dsh", "commands")
	if err := os.MkdirAll(cmdDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cmdDir, "review.md"), []byte("---\ndescription: review a file\nargument-hint: FILE\n---\nReview $ARGUMENTS carefully."), 0o644); err != nil {
		t.Fatal(err)
	}
	c := start(t, options{cwd: cwd, mode: "default", script: script(t, turn{Text: "Reviewed.", InputTokens: 1200, OutputTokens: 30})})
	from := c.mark()
	id := c.newSession()
	c.mustPrompt(id, "/review main.go", sdk.StopReasonEndTurn)
	c.mustPrompt(id, "/mode read-only", sdk.StopReasonEndTurn)
	c.mustPrompt(id, "/model claude-sonnet-4-5", sdk.StopReasonEndTurn)
	c.mustPrompt(id, "/cost", sdk.StopReasonEndTurn)
	c.mustPrompt(id, "/compact", sdk.StopReasonEndTurn)
	// After /compact the context's size is an estimate over the whole
	// request, which holds paths of this machine's temporary directories: the
	// golden keeps when usage is sent, the host's tests what it counts.
	tr := c.transcript(from, id)
	used := regexp.MustCompile(`("sessionUpdate":"usage_update","size":\d+,"used":)\d+`)
	for i, l := range tr {
		tr[i] = used.ReplaceAllString(l, "${1}0")
	}
	golden(t, "commands", tr)
	var users, sent []string
	for _, r := range records(t, c, id) {
		if r.Type == session.TypeUser {
			users, sent = append(users, r.Text), append(sent, attach.ModelText(r.Text, r.Content))
		}
	}
	if len(users) != 1 || users[0] != "/review main.go" || sent[0] != "Review main.go carefully." {
		t.Errorf("prompts logged = %q, sent %q; want the custom command as typed, its expansion sent", users, sent)
	}
}

// TestImages sends a prompt with an image: it is logged with the prompt and
// replayed after it on load.
func TestImages(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	data := base64.StdEncoding.EncodeToString(buf.Bytes())
	dir := t.TempDir()
	c := start(t, options{sessionDir: dir, script: script(t, turn{Text: "A red dot."})})
	id := c.newSession()
	resp, err := c.conn.Prompt(c.ctx(), sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{
		sdk.TextBlock("What is in this picture?"), sdk.ImageBlock(data, "image/png")}})
	if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt with an image: %v, %v", resp.StopReason, err)
	}
	var logged []string
	for _, r := range records(t, c, id) {
		for _, im := range r.Content {
			logged = append(logged, string(r.Type)+" "+im.MimeType)
			if im.Data != data {
				t.Error("the logged image is not the one sent")
			}
		}
	}
	if strings.Join(logged, ",") != "user image/png" {
		t.Errorf("logged images: %q", logged)
	}
	c.close()
	again := start(t, options{sessionDir: dir, cwd: c.cwd, script: script(t, turn{Text: "x"})})
	from := again.mark()
	if _, err := again.conn.LoadSession(again.ctx(), sdk.LoadSessionRequest{SessionId: id, Cwd: again.cwd, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	golden(t, "image-load", again.transcript(from, id))
	if !strings.Contains(strings.Join(again.out.all()[from:], "\n"), `"data":"`+data+`"`) {
		t.Error("the reloaded session does not show the image")
	}
}

// TestUsage sends usage_update after each model call — the context's tokens,
// the model's window and the cost — and the turn's usage in its answer; a
// reload shows the usage so far.
func TestUsage(t *testing.T) {
	dir := t.TempDir()
	c := start(t, options{sessionDir: dir, args: []string{"--model", "claude-sonnet-4-5"}, script: script(t,
		turn{ToolCalls: []call{bash("b1", "true")}, InputTokens: 10_000, OutputTokens: 200},
		turn{Text: "Done.", InputTokens: 10_300, OutputTokens: 50})})
	id := c.newSession()
	from := c.mark()
	resp, err := c.prompt(id, "Run true.")
	if err != nil || resp != sdk.StopReasonEndTurn {
		t.Fatal(resp, err)
	}
	golden(t, "usage", c.transcript(from, id))
	c.close()
	again := start(t, options{sessionDir: dir, cwd: c.cwd, args: []string{"--model", "claude-sonnet-4-5"}, script: script(t, turn{Text: "x"})})
	from = again.mark()
	if _, err := again.conn.LoadSession(again.ctx(), sdk.LoadSessionRequest{SessionId: id, Cwd: again.cwd, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	last := ""
	for _, l := range again.out.all()[from:] {
		if strings.Contains(l, "usage_update") {
			last = l
		}
	}
	// 10,300 in + 50 out in context; $3/$15 per million: 20,300 in and 250 out cost $0.06465.
	if !strings.Contains(last, `"used":10350`) || !strings.Contains(last, `"size":200000`) || !strings.Contains(last, `"amount":0.06465`) {
		t.Errorf("the reloaded session's usage_update = %s", last)
	}
}
