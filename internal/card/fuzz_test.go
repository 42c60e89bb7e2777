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
			if want := generalEncoding(t, r); want != nil {
				if got, _ := r.(json.Marshaler).MarshalJSON(); string(got) != string(want) {
					t.Fatalf("encoded by hand:\n%s\nby reflection:\n%s", got, want)
				}
			}
			if _, err := DecodeResult(j); err != nil {
				t.Fatalf("re-decoding %s: %v", j, err)
			}
		}
	})
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
