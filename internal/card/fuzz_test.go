package card

import (
	"encoding/json"
	"testing"
)

// FuzzDecode checks that decoding never panics and that whatever decodes
// re-encodes to something that decodes to the same card.
func FuzzDecode(f *testing.F) {
	for _, c := range everyCall {
		j, _ := json.Marshal(c)
		f.Add(j)
	}
	for _, r := range everyResult {
		j, _ := json.Marshal(r)
		f.Add(j)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if c, err := DecodeCall(data); err == nil {
			j, err := json.Marshal(c)
			if err != nil {
				t.Fatalf("re-encoding %#v: %v", c, err)
			}
			if _, err := DecodeCall(j); err != nil {
				t.Fatalf("re-decoding %s: %v", j, err)
			}
		}
		if r, err := DecodeResult(data); err == nil {
			j, err := json.Marshal(r)
			if err != nil {
				t.Fatalf("re-encoding %#v: %v", r, err)
			}
			if _, err := DecodeResult(j); err != nil {
				t.Fatalf("re-decoding %s: %v", j, err)
			}
		}
	})
}
