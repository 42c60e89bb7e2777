package session

import "testing"

// TestDecodeAllocs: a line is decoded into the decoder's own record, handed
// out by value, with the decoder's own reader: what a line allocates is its
// strings, not a record and a reader of its own — a reload decodes every line.
func TestDecodeAllocs(t *testing.T) {
	tests := []struct {
		name string
		line string
		max  float64
	}{
		{"assistant text", `{"type":"assistant","time":"2026-01-02T03:04:05.678Z","text":"That step is done."}`, 1},
		{"turn end", `{"type":"turn_end","time":"2026-01-02T03:04:05.678Z","stopReason":"end_turn"}`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &decoder{name: "test", header: true}
			var r Record
			line := []byte(tt.line)
			n := testing.AllocsPerRun(100, func() {
				var err error
				if r, _, err = d.decode(line); err != nil {
					t.Fatal(err)
				}
			})
			if n > tt.max {
				t.Errorf("a line allocates %.0f times, want at most %.0f", n, tt.max)
			}
			if r.Type == "" {
				t.Error("nothing decoded")
			}
		})
	}
}
