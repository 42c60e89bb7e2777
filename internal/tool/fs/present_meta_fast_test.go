package fs

import (
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"

	"github.com/dsh-dev/dsh/internal/jsonfast"
)

// checkFast fails if DecodeFast takes what UnmarshalJSON refuses or decodes
// to anything else; it reports whether DecodeFast took b.
func checkFast[M any, PM interface {
	*M
	DecodeFast(*jsonfast.Reader) bool
}](t *testing.T, b []byte) bool {
	t.Helper()
	var fast M
	if d := jsonfast.NewReader(b); !PM(&fast).DecodeFast(d) || !d.End() {
		return false
	}
	var want M
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("DecodeFast took what UnmarshalJSON refuses (%v):\n%s", err, b)
	}
	if diff := cmp.Diff(want, fast, cmp.AllowUnexported(want)); diff != "" {
		t.Fatalf("DecodeFast and UnmarshalJSON differ on\n%s\n(-UnmarshalJSON +DecodeFast):\n%s", b, diff)
	}
	return true
}

var fastMetaSeeds = []string{
	`{"path":"/w/a.go","offset":1,"lines":[{"number":1,"text":"package a"},{"number":2,"text":"\t\"x\""}],"totalLines":2,"lang":"go","stamp":` + stampOK + `}`,
	hunkMetaJSON(hunkOK),
	`{"path":"f.txt","created":true,"hunks":[],"stamp":` + stampOK + `}`,
	`{"path":"/a","offset":1,"lines":[{"number":1}],"totalLines":1}`,
	`{"path":"/a","offset":1,"lines":[],"totalLines":0,"stamp":{"path":"/a"}}`,
	`{"path":"f.txt","created":true}`,
	`{"path":"f.txt","created":true,"hunks":null}`,
	`{"path":"/a","offset":1,"lines":[],"totalLines":0,"extra":1}`,
}

// TestMetaDecodeFast: the meta the tools write is decoded without reflection,
// to what the strict decoder makes of it, and what it leaves out (a missing
// member, a null) is left to the strict decoder.
func TestMetaDecodeFast(t *testing.T) {
	for i, s := range fastMetaSeeds {
		took := checkFast[readMeta](t, []byte(s)) || checkFast[diffMeta](t, []byte(s))
		if took != (i < 3) {
			t.Errorf("DecodeFast took %v, want %v:\n%s", took, i < 3, s)
		}
	}
}

func FuzzMetaDecodeFast(f *testing.F) {
	for _, s := range fastMetaSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkFast[readMeta](t, b)
		checkFast[diffMeta](t, b)
	})
}
