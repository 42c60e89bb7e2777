package tool

import (
	"context"
	"errors"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/jsonfast"
)

// countedMeta counts its decodes, to show that a result's meta read with the
// record is not decoded again by the fold or the presenter.
type countedMeta struct {
	N int `json:"n"`
}

var metaDecodes int

func (m *countedMeta) DecodeFast(d *jsonfast.Reader) bool {
	metaDecodes++
	type plain countedMeta
	return jsonfast.DecodeValue(d, (*plain)(m))
}

func (m *countedMeta) Validate() error {
	if m.N < 0 {
		return errNegative
	}
	return nil
}

var errNegative = errors.New("negative")

func countedTool(seen *[]int) Tool {
	return New(Spec[echoParams, countedMeta]{
		Name: "counted", Description: "counts",
		Execute: func(context.Context, Env, echoParams, *countedMeta) (Result, *countedMeta, error) {
			return Text("ok"), &countedMeta{N: 1}, nil
		},
		PresentCall: func(echoParams, *countedMeta) card.Call { return &card.GenericCall{Title: "counted"} },
		PresentResult: func(_ echoParams, r Result, m *countedMeta) card.Result {
			if m == nil {
				return nil
			}
			return &card.GenericResult{Content: r.Content}
		},
		Fold: func(_ *Session, _ echoParams, _ Result, m *countedMeta) {
			if m != nil {
				*seen = append(*seen, m.N)
			}
		},
	})
}

// TestReadMeta: meta read at its place in a record is decoded once, there,
// and the fold and the presenter get it from the memo; meta it does not take
// leaves the reader where it was.
func TestReadMeta(t *testing.T) {
	tests := []struct {
		name, tool string
		meta, rest string // the meta, and what follows it in the record
		ok         bool
		decodes    int // DecodeFast calls in all: the read's, the fold's and the presenter's
		folded     []int
		card       bool
	}{
		{"plain", "counted", `{"n":3}`, `,"isError":false}`, true, 1, []int{3}, true},
		{"invalid: kept, presented as nothing", "counted", `{"n":-1}`, `}`, true, 1, nil, false},
		{"not plain: left to the strict decoder", "counted", `{"n":3.5}`, `}`, false, 2, nil, false},
		{"unknown tool", "nope", `{"n":3}`, `}`, false, 0, nil, false},
		{"tool without typed meta", "echo", `{"n":3}`, `}`, false, 0, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var folded []int
			reg := NewRegistry(countedTool(&folded), echoTool())
			metaDecodes = 0
			input := tt.meta + tt.rest
			d := jsonfast.NewReader([]byte(input))
			raw, ok := reg.ReadMeta(tt.tool, d)
			if ok != tt.ok {
				t.Fatalf("ReadMeta ok = %v, want %v", ok, tt.ok)
			}
			want := tt.rest
			if !ok {
				want = input                  // the reader has not moved
				raw = jsontext.Value(tt.meta) // as the record's decoder then reads it
			} else if string(raw) != tt.meta {
				t.Errorf("raw %q, want %q", raw, tt.meta)
			}
			if left := input[d.Offset():]; left != want {
				t.Errorf("left %q, want %q", left, want)
			}
			if tt.tool != "counted" {
				return
			}
			r := Result{Content: []card.Content{card.Text("ok")}, Meta: raw}
			reg.Fold(nil, "counted", []byte(`{"path":"a"}`), r)
			c := reg.PresentResult("counted", []byte(`{"path":"a"}`), r)
			if metaDecodes != tt.decodes {
				t.Errorf("meta decoded %d times, want %d", metaDecodes, tt.decodes)
			}
			if len(folded) != len(tt.folded) || len(folded) > 0 && folded[0] != tt.folded[0] {
				t.Errorf("folded %v, want %v", folded, tt.folded)
			}
			if (c != nil) != tt.card {
				t.Errorf("card %v, want one: %v", c, tt.card)
			}
		})
	}
}
