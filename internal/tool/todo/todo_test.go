package todo

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/workspace"
)

var update = flag.Bool("update", false, "rewrite golden files")

type fixture struct {
	sess  *tool.Session
	reg   *tool.Registry
	plans [][]tool.PlanEntry
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ws, err := workspace.New(t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{sess: tool.NewSession(t.Name(), ws), reg: tool.NewRegistry(Tool())}
	t.Cleanup(func() { _ = f.sess.Close() })
	return f
}

func (f *fixture) write(t *testing.T, args string) tool.Result {
	t.Helper()
	env := tool.Env{Session: f.sess, Plan: func(p []tool.PlanEntry) { f.plans = append(f.plans, p) }}
	r := res(f.reg.Run(context.Background(), env, "todo_write", []byte(args), nil))
	f.reg.Fold(f.sess, "todo_write", []byte(args), r) // as the session host does once the result is logged
	return r
}

const sample = `{"todos":[
	{"content":"Read the issue","status":"completed"},
	{"content":"Write the tests","status":"in_progress","priority":"high"},
	{"content":"Run the benchmark","status":"pending","priority":"low"}]}`

func TestWriteReplacesAndPublishes(t *testing.T) {
	f := newFixture(t)
	r := f.write(t, sample)
	if r.IsError {
		t.Fatal(r.TextOf())
	}
	want := "[x] Read the issue\n[~] Write the tests (high)\n[ ] Run the benchmark (low)"
	if r.TextOf() != want {
		t.Errorf("text = %q, want %q", r.TextOf(), want)
	}
	if len(f.plans) != 1 || len(f.plans[0]) != 3 || f.plans[0][1] != (tool.PlanEntry{Content: "Write the tests", Status: "in_progress", Priority: "high"}) {
		t.Errorf("published plans = %+v", f.plans)
	}
	var m meta
	if err := json.Unmarshal(r.Meta, &m); err != nil || len(m.Todos) != 3 || m.Todos[2].Priority != "low" {
		t.Errorf("meta = %s (%v)", r.Meta, err)
	}

	r = f.write(t, `{"todos":[{"content":"Only this","status":"pending"}]}`)
	if got := Current(f.sess); len(got) != 1 || got[0].Content != "Only this" {
		t.Errorf("list after the second write = %+v", got)
	}
	if r.TextOf() != "[ ] Only this" || len(f.plans) != 2 {
		t.Errorf("second write: %q, %d plans", r.TextOf(), len(f.plans))
	}

	r = f.write(t, `{"todos":[]}`)
	if r.IsError || len(Current(f.sess)) != 0 || r.TextOf() != "The todo list is empty." || len(f.plans[2]) != 0 {
		t.Errorf("clearing: %+v, list %+v", r, Current(f.sess))
	}
}

func TestListsAreSessionScoped(t *testing.T) {
	a, b := newFixture(t), newFixture(t)
	a.write(t, sample)
	if got := Current(b.sess); len(got) != 0 {
		t.Errorf("another session sees %+v", got)
	}
}

func TestValidation(t *testing.T) {
	for _, tc := range []struct {
		name, args, want string
	}{
		{"missing todos", `{}`, "todos"},
		{"bad status", `{"todos":[{"content":"x","status":"done"}]}`, "at todos[].status: enum"},
		{"bad priority", `{"todos":[{"content":"x","status":"pending","priority":"urgent"}]}`, "at todos[].priority: enum"},
		{"empty content", `{"todos":[{"content":"","status":"pending"}]}`, "at todos[].content: minLength"},
		{"missing status", `{"todos":[{"content":"x"}]}`, "status"},
		{"unknown field", `{"todos":[{"content":"x","status":"pending","id":"1"}]}`, "id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			r := f.write(t, tc.args)
			if !r.IsError || !strings.Contains(r.TextOf(), tc.want) {
				t.Errorf("result = %q, want an error naming %q", r.TextOf(), tc.want)
			}
			if len(f.plans) != 0 {
				t.Error("an invalid list was published")
			}
		})
	}
}

func TestSeveralInProgressWarns(t *testing.T) {
	f := newFixture(t)
	r := f.write(t, `{"todos":[{"content":"a","status":"in_progress"},{"content":"b","status":"in_progress"}]}`)
	if r.IsError {
		t.Fatal(r.TextOf())
	}
	if !strings.Contains(r.TextOf(), "Note: 2 items are in_progress") {
		t.Errorf("text = %q", r.TextOf())
	}
}

func TestCards(t *testing.T) {
	for _, tc := range []struct{ name, args string }{
		{"todo", sample},
		{"todo_single", `{"todos":[{"content":"Ship it","status":"pending"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			r := f.write(t, tc.args)
			c, err := json.Marshal(f.reg.PresentCall("todo_write", []byte(tc.args), nil))
			if err != nil {
				t.Fatal(err)
			}
			res, err := json.Marshal(f.reg.PresentResult("todo_write", []byte(tc.args), r))
			if err != nil {
				t.Fatal(err)
			}
			v := jsontext.Value(`{"call":` + string(c) + `,"result":` + string(res) + `}`)
			if err := v.Indent(); err != nil {
				t.Fatal(err)
			}
			got := append(v, '\n')
			path := filepath.Join("testdata", tc.name+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if string(got) != string(want) {
				t.Errorf("%s differs:\ngot:\n%s\nwant:\n%s", path, got, want)
			}
		})
	}
	f := newFixture(t)
	if c := f.reg.PresentResult("todo_write", []byte(sample), tool.Errorf("boom")); c != nil {
		t.Errorf("an error result has a card: %#v", c)
	}
}

func TestToolContract(t *testing.T) {
	tl := Tool()
	if tl.Name() != "todo_write" || tl.ReadOnly() || tl.Permission() != tool.PermNone || tl.Kind() != "think" || tl.Description() == "" {
		t.Errorf("todo_write: ro=%v perm=%v kind=%s", tl.ReadOnly(), tl.Permission(), tl.Kind())
	}
	for _, enum := range []string{`"enum":["pending","in_progress","completed"]`, `"enum":["high","medium","low"]`} {
		if !strings.Contains(string(tl.Schema()), enum) {
			t.Errorf("schema lacks %s: %s", enum, tl.Schema())
		}
	}
}
