package web

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/session"
)

type sseEventT struct {
	id, event, data string
}

// readEvents parses a server-sent event stream onto a channel until it ends.
func readEvents(t *testing.T, ctx context.Context, c *http.Client, u, lastID string) <-chan sseEventT {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET %s = %s %s", u, resp.Status, resp.Header.Get("Content-Type"))
	}
	ch := make(chan sseEventT, 100)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		var ev sseEventT
		var data []string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				ev.data = strings.Join(data, "\n")
				ch <- ev
				ev, data = sseEventT{}, nil
			case strings.HasPrefix(line, "id: "):
				ev.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				data = append(data, line[6:])
			}
		}
	}()
	return ch
}

var eventsURL = regexp.MustCompile(`data-events="([^"]+)"`)

// A page follows its session: records that another writer appends after the page
// was served arrive as fragments — the running call, its live output as it is
// printed, the result replacing the call — and nothing the page already had.
func TestEventsFollowAnotherWriter(t *testing.T) {
	dir := t.TempDir()
	r := newRecorder(t, dir, sid)
	r.say(session.TypeUser, "already on the page")
	_, ts := testServer(t, dir)
	c := client(t, ts)
	_, page := get(t, c, ts.URL+"/s/"+sid)
	m := eventsURL.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no event stream on the page:\n%s", page)
	}
	if m[1] != "/s/"+sid+"/events?from=2" {
		t.Errorf("events URL %q, want it to start after the 2 records on the page", m[1])
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	events := readEvents(t, ctx, c, ts.URL+m[1], "")

	r.say(session.TypeAssistant, "Running <it>.")
	done := make(chan string)
	go func() {
		id, _ := r.call("bash", map[string]any{"command": `for i in 1 2 3; do echo "tick $i <b>"; sleep 0.3; done`})
		r.append(session.Record{Type: session.TypeTurnEnd, StopReason: "end_turn"})
		done <- id
	}()

	var got []sseEventT
	for ev := range events {
		got = append(got, ev)
		if strings.Contains(ev.data, `data-item="turn-end"`) {
			break
		}
	}
	callID := <-done
	cancel()
	if len(got) == 0 || !strings.Contains(got[len(got)-1].data, "turn-end") {
		t.Fatalf("the stream ended before the turn did: %+v", got)
	}
	elem := `id="c-` + callID + `"`
	var kinds []string
	var output strings.Builder
	lastID := 2
	for _, ev := range got {
		n, err := strconv.Atoi(ev.id)
		if err != nil || n <= lastID {
			t.Errorf("event id %q after %d", ev.id, lastID)
		}
		lastID = n
		if strings.Contains(ev.data, "already on the page") {
			t.Error("the stream repeats a record the page has")
		}
		switch {
		case ev.event == "progress":
			if !strings.Contains(ev.data, `data-call="c-`+callID+`"`) {
				t.Errorf("progress for another call: %q", ev.data)
			}
			output.WriteString(ev.data)
			kinds = append(kinds, "progress")
		case strings.Contains(ev.data, elem) && strings.Contains(ev.data, `data-state="running"`):
			kinds = append(kinds, "running")
		case strings.Contains(ev.data, elem) && strings.Contains(ev.data, `data-state="done"`):
			kinds = append(kinds, "result")
			if !strings.Contains(ev.data, "tick 3 &lt;b&gt;") || !strings.Contains(ev.data, `data-card="terminal-result"`) {
				t.Errorf("result fragment: %q", ev.data)
			}
		case strings.Contains(ev.data, `data-item="assistant"`):
			kinds = append(kinds, "assistant")
			if !strings.Contains(ev.data, "Running &lt;it&gt;.") {
				t.Errorf("assistant fragment: %q", ev.data)
			}
		case strings.Contains(ev.data, `data-item="turn-end"`):
			kinds = append(kinds, "turn-end")
		default:
			t.Errorf("unexpected event %+v", ev)
		}
	}
	// Progress chunks are coalesced by the tool, so their number varies; the
	// sequence does not.
	seq := strings.Join(compact(kinds), " ")
	if seq != "assistant running progress result turn-end" {
		t.Errorf("events %v, want assistant, the running call, its output, the result, the turn end", kinds)
	}
	for i := 1; i <= 3; i++ {
		if want := "tick " + strconv.Itoa(i) + " &lt;b&gt;"; !strings.Contains(output.String(), want) {
			t.Errorf("live output lacks %q: %q", want, output.String())
		}
	}

	// A reconnecting browser sends the last id it saw and gets only what follows.
	ctx2, cancel2 := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel2()
	resumed := readEvents(t, ctx2, c, ts.URL+m[1], got[len(got)-2].id)
	ev := <-resumed
	if ev.id != got[len(got)-1].id || !strings.Contains(ev.data, "turn-end") {
		t.Errorf("resumed stream starts with %+v, want the turn end", ev)
	}
}

// compact drops repeats of the previous element.
func compact(s []string) []string {
	var out []string
	for _, v := range s {
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	return out
}

// A CR or LF in a fragment (command output is full of them) cannot break the
// event framing: LFs become data lines, CRs character references.
func TestEventFraming(t *testing.T) {
	got := string(sseEvent("progress", 7, []byte("<pre data-call=\"c-1\">a\r\nb\n\nc</pre>")))
	want := "id: 7\nevent: progress\ndata: <pre data-call=\"c-1\">a&#13;\ndata: b\ndata: \ndata: c</pre>\n\n"
	if got != want {
		t.Errorf("sseEvent = %q, want %q", got, want)
	}
}

// A damaged line of the log is shown as such, on the page and in its live
// stream, and what follows it still arrives: the browser never reconnects to the
// same bad line forever.
func TestDamagedLineIsShownAndSkipped(t *testing.T) {
	dir := t.TempDir()
	r := newRecorder(t, dir, sid)
	r.say(session.TypeUser, "before the damage")
	damage := func(line string) {
		f, err := os.OpenFile(r.log.Path(), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(line + "\n"); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	damage(`{"type":"user","text":`)
	r.say(session.TypeUser, "after the first damage")
	_, ts := testServer(t, dir)
	c := client(t, ts)
	code, page := get(t, c, ts.URL+"/s/"+sid)
	if code != http.StatusOK || !strings.Contains(page, "a damaged line of the log could not be shown") ||
		!strings.Contains(page, "after the first damage") {
		t.Fatalf("GET = %d:\n%s", code, page)
	}
	m := eventsURL.FindStringSubmatch(page)
	if m == nil || m[1] != "/s/"+sid+"/events?from=4" {
		t.Fatalf("events URL %v, want it to count the damaged line", m)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	events := readEvents(t, ctx, c, ts.URL+m[1], "")
	damage(`not json at all`)
	r.say(session.TypeUser, "after the second damage")
	var got []string
	for ev := range events {
		got = append(got, ev.data)
		if strings.Contains(ev.data, "after the second damage") {
			break
		}
	}
	cancel()
	if len(got) != 2 || !strings.Contains(got[0], "a damaged line of the log could not be shown") ||
		!strings.Contains(got[1], "after the second damage") {
		t.Errorf("events after the live damage: %q", got)
	}
}

// What dsh added to the model's context — a compaction's summary, a nested
// AGENTS.md — shows on the page where it happened, escaped like any message.
func TestContextRecordsShow(t *testing.T) {
	dir := t.TempDir()
	r := newRecorder(t, dir, sid)
	r.say(session.TypeUser, "before")
	r.append(session.Record{Type: session.TypeCompaction, Text: "what was done <script>x</script>", Keep: 1})
	r.append(session.Record{Type: session.TypeInstructions, Path: "sub/AGENTS.md", Text: "use tabs"})
	_, ts := testServer(t, dir)
	code, page := get(t, client(t, ts), ts.URL+"/s/"+sid)
	for _, want := range []string{`data-item="context"`, "Compacted the conversation", "what was done &lt;script&gt;", "Project instructions: sub/AGENTS.md", "use tabs"} {
		if !strings.Contains(page, want) {
			t.Errorf("GET = %d: no %q in\n%s", code, want, page)
		}
	}
}
