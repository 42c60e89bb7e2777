package session

import (
	"testing"
	"time"

	"github.com/go-json-experiment/json"
)

// A header is written token by token exactly as json.Marshal writes it; any
// other record, or a header with more in it, is left to json.Marshal.
func TestEncodeHeaderIsMarshal(t *testing.T) {
	at := time.Date(2026, 12, 5, 3, 4, 5, 123456789, time.UTC)
	for name, r := range map[string]Record{
		"plain":        {Type: TypeHeader, Time: at, Version: FormatVersion, SessionID: "20261205-030405-abcdefgh", Cwd: "/home/me/project", System: "You are dsh."},
		"whole second": {Type: TypeHeader, Time: at.Truncate(time.Second), Version: 1, SessionID: "x", Cwd: "/"},
		"milliseconds": {Type: TypeHeader, Time: at.Truncate(time.Millisecond), Version: 1},
		"zero time":    {Type: TypeHeader},
		"escapes": {Type: TypeHeader, Time: at, Version: 1, SessionID: "s", Cwd: "/tmp/ä \"q\" \\ <a>&b",
			System: "line\nnext\ttab\r\x00\x1f \u2028\u2029 </script> 'single' 😀 \x7f"},
		"invalid UTF-8": {Type: TypeHeader, Time: at, Version: 1, Cwd: "/tmp/\xff\xfe", System: "bad \xc3\x28 byte"},
		"no version":    {Type: TypeHeader, Time: at, SessionID: "s"},
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := encodeHeader(r)
			if !ok {
				t.Fatal("not encoded the quick way")
			}
			want, err := json.Marshal(r, encOpts)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("encodeHeader\n%s\njson.Marshal\n%s", got, want)
			}
		})
	}
	for name, r := range map[string]Record{
		"child session": {Type: TypeHeader, Time: at, Version: 1, Parent: &Parent{Session: "p", CallID: "c"}},
		"with text":     {Type: TypeHeader, Time: at, Version: 1, Text: "hello"},
		"user record":   {Type: TypeUser, Time: at, Text: "hello"},
		"year 10000":    {Type: TypeHeader, Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Version: 1},
		"before year 0": {Type: TypeHeader, Time: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), Version: 1},
	} {
		if b, ok := encodeHeader(r); ok {
			t.Errorf("%s: encoded the quick way as %s, want it left to json.Marshal", name, b)
		}
	}
}
