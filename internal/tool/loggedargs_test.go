package tool

import (
	"context"
	"testing"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/jsonfast"
)

// countedParams counts its decodes, to show that a logged call's arguments
// are decoded once for its fold and its two cards.
type countedParams struct {
	Text string `json:"text"`
}

var paramDecodes int

func (p *countedParams) DecodeFast(d *jsonfast.Reader) bool {
	paramDecodes++
	type plain countedParams
	return jsonfast.DecodeValue(d, (*plain)(p))
}

func countedArgsTool(seen *[]string) Tool {
	return New(Spec[countedParams, countedMeta]{
		Name: "args", Description: "counts its arguments' decodes",
		Execute: func(context.Context, Env, countedParams, *countedMeta) (Result, *countedMeta, error) {
			return Text("ok"), nil, nil
		},
		PresentCall: func(p countedParams, _ *countedMeta) card.Call { return &card.GenericCall{Title: p.Text} },
		PresentResult: func(p countedParams, _ Result, _ *countedMeta) card.Result {
			return &card.GenericResult{Title: p.Text}
		},
		Fold: func(_ *Session, p countedParams, _ Result, _ *countedMeta) { *seen = append(*seen, p.Text) },
	})
}

// TestLoggedArgsDecodedOnce: the fold, the call card and the result card of a
// logged call decode its arguments once when they get the same bytes; other
// bytes (equal ones elsewhere included) are decoded for themselves, and
// arguments that do not decode are not remembered.
func TestLoggedArgsDecodedOnce(t *testing.T) {
	tests := []struct {
		name    string
		args    func(first []byte) []byte // the bytes the cards get, given the fold's
		first   string
		decodes int
		title   string
	}{
		{"the same bytes", func(b []byte) []byte { return b }, `{"text":"hi"}`, 1, "hi"},
		{"equal bytes elsewhere", func(b []byte) []byte { return append([]byte(nil), b...) }, `{"text":"hi"}`, 2, "hi"},
		{"not decodable", func(b []byte) []byte { return b }, `{"text":1}`, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var folded []string
			reg := NewRegistry(countedArgsTool(&folded))
			paramDecodes = 0
			first := []byte(tt.first)
			reg.Fold(NewSession("s", nil), "args", first, Text("ok"))
			args := tt.args(first)
			c := reg.PresentCall("args", args, nil)
			r := reg.PresentResult("args", args, Text("ok"))
			if tt.title == "" {
				if len(folded) != 0 {
					t.Errorf("folded %v from arguments that do not decode", folded)
				}
				return
			}
			if paramDecodes != tt.decodes {
				t.Errorf("arguments decoded %d times, want %d", paramDecodes, tt.decodes)
			}
			if g, ok := c.(*card.GenericCall); !ok || g.Title != tt.title {
				t.Errorf("call card %#v, want title %q", c, tt.title)
			}
			if g, ok := r.(*card.GenericResult); !ok || g.Title != tt.title {
				t.Errorf("result card %#v, want title %q", r, tt.title)
			}
			if len(folded) != 1 || folded[0] != tt.title {
				t.Errorf("folded %v, want [%s]", folded, tt.title)
			}
		})
	}
}
