package credentials

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPTokens: entries are kept apart, removed, private, and a file others
// may read is refused rather than used.
func TestMCPTokens(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "cfg")
	getenv := func(k string) string { return map[string]string{"XDG_CONFIG_HOME": cfg}[k] }
	store := &MCPTokens{Path: MCPTokensPath(getenv)}
	if want := filepath.Join(cfg, "dsh", "mcp-tokens.json"); store.Path != want {
		t.Fatalf("path = %s, want %s", store.Path, want)
	}
	if b, err := store.Load("a"); b != nil || err != nil {
		t.Fatalf("nothing kept yet: %s, %v", b, err)
	}
	for _, kv := range [][2]string{{"a", `{"token":1}`}, {"b", `{"token":2}`}} {
		if err := store.Save(kv[0], []byte(kv[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Save("a", nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := store.Load("a"); b != nil {
		t.Errorf("a after removal = %s", b)
	}
	var got bytes.Buffer
	if b, _ := store.Load("b"); json.Compact(&got, b) != nil || got.String() != `{"token":2}` {
		t.Errorf("b = %s", b)
	}
	fi, err := os.Stat(store.Path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("file: %v, %v; want mode 0600", fi, err)
	}
	if err := os.Chmod(store.Path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Load("b"); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a file others may read = %v, want it refused", err)
	}
}
