package toolset

import (
	"runtime"
	"testing"
	"unsafe"
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
