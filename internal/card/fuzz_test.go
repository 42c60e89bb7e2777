package card

import (
	"bytes"
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
	// Text that HTML escaping and its line separators change, beside other runes.
	f.Add([]byte("{\"card\":\"read\",\"path\":\"a<b>.go\",\"offset\":1,\"lines\":[{\"number\":1,\"text\":\"a && b \u2028\u2029 \u2026 \u20ac \\u2028\"}],\"totalLines\":1}"))
	f.Add([]byte("{\"card\":\"search\",\"query\":\"<x>\",\"dir\":\".\",\"files\":[{\"path\":\"\u00e9&.go\",\"count\":1,\"matches\":[{\"line\":1,\"text\":\"\u2028<\u2029\",\"ranges\":[[0,1]]}]}],\"total\":1}"))
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
			if want := generalEncoding(t, r); want != nil {
				if got, _ := r.(json.Marshaler).MarshalJSON(); string(got) != string(want) {
					t.Fatalf("encoded by hand:\n%s\nby reflection:\n%s", got, want)
				}
				checkHTMLSafe(t, r, want)
			}
			if _, err := DecodeResult(j); err != nil {
				t.Fatalf("re-decoding %s: %v", j, err)
			}
		}
	})
}

// checkHTMLSafe fails unless a hand-encoded result's HTMLSafeJSON is its
// encoding as json.HTMLEscape escapes it.
func checkHTMLSafe(t *testing.T, r Result, plain []byte) {
	t.Helper()
	var got []byte
	var ok bool
	switch r := r.(type) {
	case *ReadResult:
		got, ok = r.HTMLSafeJSON()
	case *SearchResult:
		got, ok = r.HTMLSafeJSON()
	case *GenericResult, *TerminalResult, *DiffResult, *PlanResult, *QuestionResult, *TaskResult:
		return
	}
	var want bytes.Buffer
	json.HTMLEscape(&want, plain)
	if !ok || !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("HTMLSafeJSON (ok %v):\n%s\nHTMLEscape:\n%s", ok, got, want.Bytes())
	}
}

// generalEncoding is what the reflection encoder writes for the results that
// are encoded by hand, nil for the others.
func generalEncoding(t *testing.T, r Result) []byte {
	var b []byte
	var err error
	switch r := r.(type) {
	case *ReadResult:
		b, err = marshalTagged(KindRead, (*readResult)(r))
	case *SearchResult:
		b, err = marshalTagged(KindSearch, (*searchResult)(r))
	case *GenericResult, *TerminalResult, *DiffResult, *PlanResult, *QuestionResult, *TaskResult:
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}
