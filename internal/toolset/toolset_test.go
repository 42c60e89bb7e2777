package toolset

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// Every session builds its registry; the tools' schemas are built once per
// process and shared, so a second registry costs only its own small state.
func TestRegistriesShareSchemas(t *testing.T) {
	first := New(Options{})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	second := New(Options{KeepEnv: []string{"X"}})
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Errorf("a second registry allocated %d bytes, want at most 64 KiB: its schemas were built again", n)
	}
	for i, a := range first.Tools() {
		b := second.Tools()[i]
		if unsafe.SliceData(a.Schema()) != unsafe.SliceData(b.Schema()) {
			t.Errorf("%s: each registry holds its own copy of the schema", a.Name())
		}
	}
}

// Every tool's schema resolves into a validator, which is built only when a
// call is first validated: a call with an unknown member is refused for that
// member.
func TestSchemasResolve(t *testing.T) {
	ws, err := workspace.New(t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	sess := tool.NewSession("t", ws)
	defer func() { _ = sess.Close() }()
	reg := New(Options{})
	for _, tl := range reg.Tools() {
		res, err := reg.Run(t.Context(), tool.Env{Session: sess}, tl.Name(), []byte(`{"no_such_member":1}`), nil)
		if err != nil {
			t.Fatalf("%s: %v", tl.Name(), err)
		}
		if text := res.TextOf(); !res.IsError || strings.Contains(text, "schema") || !strings.Contains(text, "no_such_member") {
			t.Errorf("%s: %q, want the unknown member refused", tl.Name(), text)
		}
	}
}
