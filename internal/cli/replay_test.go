package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/demo"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/view"
)

// runDemoSession runs the demo script, which uses every tool, while a JSON
// consumer subscribed to the live log writes what it sees. It returns the live
// JSON lines and the log's path.
func runDemoSession(t *testing.T) (live []string, logPath string) {
	t.Helper()
	dir := t.TempDir()
	if err := demo.Install(dir); err != nil {
		t.Fatal(err)
	}
	p, err := script.Parse(demo.Script)
	if err != nil {
		t.Fatal(err)
	}
	s, err := host.Create(host.Options{SessionDir: t.TempDir(), Root: dir, Mode: agent.ModeBypass,
		Provider: func() (provider.Provider, error) { return p, nil }})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	jc := &jsonConsumer{w: &buf, pres: view.NewPresenter(s.Registry())}
	if err := jc.handle(s.Header()); err != nil { // logged before anyone could subscribe
		t.Fatal(err)
	}
	sub := s.Subscribe(func(e host.Event) {
		if e.Kind == host.KindRecord {
			if err := jc.handle(e.Record); err != nil {
				t.Error(err)
			}
		}
	})
	stop, err := s.Prompt(context.Background(), demo.Prompt)
	if err != nil || stop != agent.StopEndTurn {
		t.Fatalf("demo turn: %v, %v", stop, err)
	}
	if !sub.Flush(30 * time.Second) {
		t.Fatal("the live consumer did not catch up")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n"), s.Path()

}

func replayJSON(t *testing.T, path string) []string {
	t.Helper()
	var out, errb bytes.Buffer
	io := IO{Out: &out, Err: &errb, Getenv: func(string) string { return "" }, Now: time.Now}
	if err := runReplay(context.Background(), io, replayOptions{JSON: true, Session: path}); err != nil {
		t.Fatalf("replay: %v\n%s", err, errb.String())
	}
	return strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
}

// TestLiveAndReplayAreByteIdentical: a session that used every tool replays into
// exactly the messages and cards its live consumer saw (progress, which replay
// folds into the final card, aside).
func TestLiveAndReplayAreByteIdentical(t *testing.T) {
	live, path := runDemoSession(t)
	var want []string
	kinds := map[string]bool{}
	for _, l := range live {
		var it struct {
			Type string `json:"type"`
			Call *struct {
				Card string `json:"card"`
			} `json:"call"`
			Card *struct {
				Card string `json:"card"`
			} `json:"card"`
		}
		if err := json.Unmarshal([]byte(l), &it); err != nil {
			t.Fatalf("live line %s: %v", l, err)
		}
		if it.Call != nil {
			kinds["call:"+it.Call.Card] = true
		}
		if it.Card != nil {
			kinds["result:"+it.Card.Card] = true
		}
		if it.Type != string(session.TypeProgress) {
			want = append(want, l)
		}
	}
	for _, k := range []string{"call:generic", "call:terminal", "call:diff", "result:generic", "result:terminal", "result:read", "result:diff"} {
		if !kinds[k] {
			t.Errorf("the demo session shows no %s card; seen %v", k, kinds)
		}
	}
	got := replayJSON(t, path)
	if len(got) != len(want) {
		t.Fatalf("replay has %d lines, live had %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d differs:\nlive:   %s\nreplay: %s", i+1, want[i], got[i])
		}
	}
}

// TestReplayOfDamagedMetaFallsBack: damage the meta of every tool result in
// several ways; replay must still succeed, falling back to no result card (the
// raw content) wherever the meta no longer narrows.
func TestReplayOfDamagedMetaFallsBack(t *testing.T) {
	_, path := runDemoSession(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	damages := []string{`"garbage"`, `[]`, `{"path":7}`, `{"lines":[{"number":0}],"totalLines":-1}`, `null`, `{"hunks":[{"oldStart":-3}]}`}
	for _, dmg := range damages {
		var out bytes.Buffer
		n := 0
		for _, line := range bytes.SplitAfter(data, []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			var rec map[string]jsontext.Value
			if err := json.Unmarshal(line, &rec); err != nil {
				t.Fatal(err)
			}
			if res, ok := rec["result"]; ok {
				var r map[string]jsontext.Value
				if err := json.Unmarshal(res, &r); err != nil {
					t.Fatal(err)
				}
				r["meta"] = jsontext.Value(dmg)
				rec["result"], _ = json.Marshal(r, json.Deterministic(true))
				line, _ = json.Marshal(rec, json.Deterministic(true))
				line = append(line, '\n')
				n++
			}
			out.Write(line)
		}
		if n == 0 {
			t.Fatal("the demo log has no tool results")
		}
		damaged := filepath.Join(t.TempDir(), "damaged.jsonl")
		if err := os.WriteFile(damaged, out.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		results := 0
		for _, l := range replayJSON(t, damaged) {
			var it struct {
				Type string `json:"type"`
				Card *struct {
					Card string `json:"card"`
				} `json:"card"`
			}
			if err := json.Unmarshal([]byte(l), &it); err != nil {
				t.Fatal(err)
			}
			if it.Type != string(session.TypeToolResult) {
				continue
			}
			results++
			if it.Card != nil && it.Card.Card != "generic" {
				t.Errorf("meta %s: a %s card was made from damaged meta: %s", dmg, it.Card.Card, l)
			}
		}
		if results != n {
			t.Errorf("meta %s: replay showed %d of %d results", dmg, results, n)
		}
	}
}
