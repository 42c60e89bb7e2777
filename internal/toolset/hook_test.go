package toolset

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// Hooks written for Claude Code read its tool names and inputs: each built-in
// tool that has a Claude Code counterpart maps its calls to it.
func TestHookCalls(t *testing.T) {
	reg := New(Options{})
	for _, c := range []struct {
		tool, args, name, input string
	}{
		{"bash", `{"command":"rm -rf x","timeout_ms":5000}`, "Bash", `{"command":"rm -rf x","timeout":5000}`},
		{"read", `{"path":"a/b.go","offset":3}`, "Read", `{"file_path":"/w/sub/a/b.go","offset":3}`},
		{"read", `{"path":"/etc/hosts"}`, "Read", `{"file_path":"/etc/hosts"}`},
		{"write", `{"path":"x.txt","content":"hi"}`, "Write", `{"file_path":"/w/sub/x.txt","content":"hi"}`},
		{"edit", `{"path":"x.txt","old_string":"a","new_string":"b","replace_all":true}`, "Edit",
			`{"file_path":"/w/sub/x.txt","old_string":"a","new_string":"b","replace_all":true}`},
		{"grep", `{"pattern":"TODO","ignore_case":true,"output":"count"}`, "Grep", `{"pattern":"TODO","-i":true,"output_mode":"count"}`},
		{"glob", `{"pattern":"**/*.go","path":"."}`, "Glob", `{"pattern":"**/*.go","path":"/w/sub"}`},
		{"ls", `{}`, "LS", `{"path":"/w/sub"}`},
		{"web_fetch", `{"url":"https://example.com"}`, "WebFetch", `{"url":"https://example.com","prompt":""}`},
	} {
		tl, ok := reg.Get(c.tool)
		if !ok {
			t.Fatalf("no tool %s", c.tool)
		}
		hc, ok := tl.(tool.HookCaller)
		if !ok {
			t.Fatalf("%s is not a HookCaller", c.tool)
		}
		name, input, ok := hc.HookCall([]byte(c.args), "/w/sub")
		if !ok || name != c.name || string(input) != c.input {
			t.Errorf("%s %s: %s %s (%v), want %s %s", c.tool, c.args, name, input, ok, c.name, c.input)
		}
	}
	tl, _ := reg.Get("todo_write")
	if _, _, ok := tl.(tool.HookCaller).HookCall([]byte(`{"todos":[]}`), "/w"); ok {
		t.Error("todo_write has no Claude Code counterpart here, yet it mapped")
	}
}

// A hook's updatedInput, in Claude Code's shape, replaces the call's input and
// maps back to the tool's own arguments: a path the hook did not change stays
// as the model gave it.
func TestHookArgs(t *testing.T) {
	reg := New(Options{})
	for _, c := range []struct {
		tool, args, input, want string
	}{
		{"bash", `{"command":"rm -rf x","description":"clean"}`, `{"command":"echo no","description":"clean"}`, `{"command":"echo no","description":"clean"}`},
		{"bash", `{"command":"make"}`, `{"command":"make","timeout":9000}`, `{"command":"make","timeout_ms":9000}`},
		// The input is replaced, as in Claude Code: what the hook leaves out is gone (but the file).
		{"bash", `{"command":"make","description":"build"}`, `{"command":"make -j"}`, `{"command":"make -j"}`},
		{"write", `{"path":"x.txt","content":"hi"}`, `{"content":"bye"}`, `{"path":"x.txt","content":"bye"}`},
		{"write", `{"path":"x.txt","content":"hi"}`, `{"file_path":"/w/sub/x.txt","content":"bye"}`, `{"path":"x.txt","content":"bye"}`},
		{"write", `{"path":"x.txt","content":"hi"}`, `{"file_path":"/w/other.txt","content":"hi"}`, `{"path":"/w/other.txt","content":"hi"}`},
		{"edit", `{"path":"x.txt","old_string":"a","new_string":"b"}`, `{"file_path":"/w/sub/x.txt","old_string":"a","new_string":"c","replace_all":true}`,
			`{"path":"x.txt","old_string":"a","new_string":"c","replace_all":true}`},
		{"read", `{"path":"a.go"}`, `{"file_path":"/w/sub/a.go","limit":10}`, `{"path":"a.go","limit":10}`},
		{"grep", `{"pattern":"x"}`, `{"pattern":"y","-i":true}`, `{"pattern":"y","ignore_case":true}`},
		{"web_fetch", `{"url":"https://example.com"}`, `{"url":"https://example.org","prompt":"p"}`, `{"url":"https://example.org","prompt":"p"}`},
	} {
		tl, _ := reg.Get(c.tool)
		got, ok, err := tl.(tool.HookCaller).HookArgs([]byte(c.args), jsontext.Value(c.input), "/w/sub")
		if !ok || err != nil || string(got) != c.want {
			t.Errorf("%s %s + %s: %s (%v, %v), want %s", c.tool, c.args, c.input, got, ok, err, c.want)
		}
	}
	tl, _ := reg.Get("write")
	if _, _, err := tl.(tool.HookCaller).HookArgs([]byte(`{"path":"x","content":"y"}`), jsontext.Value(`{"content":7}`), "/w"); err == nil {
		t.Error("an updatedInput of the wrong type was taken")
	}
}

// PostToolUse hooks read each tool's result as Claude Code's tool gives it.
func TestHookResponses(t *testing.T) {
	reg := New(Options{})
	for _, c := range []struct {
		tool, args string
		res        tool.Result
		want       string
	}{
		{"bash", `{"command":"ls"}`, tool.Result{Content: []card.Content{card.Text("a.go\n\n(exit 0)")}, Meta: jsontext.Value(`{"exitCode":0,"cwd":".","outputLength":5}`)},
			`{"stdout":"a.go\n","stderr":"","interrupted":false,"isImage":false}`},
		{"bash", `{"command":"sleep 9"}`, tool.Result{Content: []card.Content{card.Text("")}, IsError: true, Meta: jsontext.Value(`{"signal":"killed","cancelled":true,"cwd":".","outputLength":0}`)},
			`{"stdout":"","stderr":"","interrupted":true,"isImage":false}`},
		{"write", `{"path":"x.txt","content":"hi"}`, tool.Text("Created x.txt"),
			`{"type":"update","filePath":"/w/sub/x.txt","content":"hi","success":true}`},
		{"edit", `{"path":"x.txt","old_string":"a","new_string":"b"}`, tool.Text("Edited"),
			`{"filePath":"/w/sub/x.txt","oldString":"a","newString":"b","replaceAll":false,"success":true}`},
		{"read", `{"path":"a.go"}`, tool.Text("1\tpackage a"),
			`{"type":"text","file":{"filePath":"/w/sub/a.go","content":"1\tpackage a","numLines":0,"startLine":0,"totalLines":0}}`},
		{"web_fetch", `{"url":"https://example.com"}`, tool.Result{Content: []card.Content{card.Text("Example")}, Meta: jsontext.Value(`{"url":"https://example.com/","status":200}`)},
			`{"url":"https://example.com/","code":200,"result":"Example","bytes":7}`},
	} {
		tl, _ := reg.Get(c.tool)
		got, ok := tl.(tool.HookCaller).HookResponse([]byte(c.args), c.res, "/w/sub")
		if !ok || string(got) != c.want {
			t.Errorf("%s: %s (%v)\nwant %s", c.tool, got, ok, c.want)
		}
	}
}
