package provider

import (
	"net/http"
	"reflect"
	"testing"
)

func TestHeaderLines(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    http.Header
		wantErr bool
	}{
		{"", nil, false},
		{"cf-aig-authorization: Bearer abc", http.Header{"Cf-Aig-Authorization": {"Bearer abc"}}, false},
		{"X-Team: dsh\n\nX-Trace:  a:b \r\nX-Team: two\n", http.Header{"X-Team": {"dsh", "two"}, "X-Trace": {"a:b"}}, false},
		{"X-Empty:", http.Header{"X-Empty": {""}}, false},
		{"no colon here", nil, true},
		{": value", nil, true},
		{"Two Words: v", nil, true},
	} {
		got, err := HeaderLines(tc.in)
		if (err != nil) != tc.wantErr || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("HeaderLines(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func FuzzHeaderLines(f *testing.F) {
	f.Add("X-A: 1\nX-B: 2")
	f.Add("bad line")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := HeaderLines(s)
		if err != nil {
			return
		}
		for name, vs := range h {
			if name == "" || len(vs) == 0 {
				t.Fatalf("%q: header %q with %d values", s, name, len(vs))
			}
		}
	})
}
