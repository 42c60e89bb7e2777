package web

import (
	"os"
	"testing"
)

func TestScratch(t *testing.T) {
	dir := t.TempDir()
	r := newRecorder(t, dir, "20250101-000000-abcdefgh")
	everyCard(r)
	_, ts := testServer(t, dir)
	c := client(t, ts)
	code, body := get(t, c, ts.URL+"/s/20250101-000000-abcdefgh")
	os.WriteFile("/tmp/page.html", []byte(body), 0o644)
	t.Log(code, len(body))
	code, body = get(t, c, ts.URL+"/")
	os.WriteFile("/tmp/list.html", []byte(body), 0o644)
}
