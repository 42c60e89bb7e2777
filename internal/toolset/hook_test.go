package toolset

import (
	"testing"

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
