package tool

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
)

// refusal is the meta of a call the harness did not run: what the user is
// shown in place of the text the model reads.
type refusal struct {
	Refused string `json:"refused"`
}

// Refused is the error result of a call the harness did not run (the mode
// forbids it, the user said no): model is what the model reads, user what
// the call's card shows.
func Refused(model, user string) Result {
	r := Errorf("%s", model)
	if b, err := json.Marshal(refusal{Refused: user}); err == nil {
		r.Meta = jsontext.Value(b)
	}
	return r
}

// RefusedCard is the card of a Refused result, in the user's words; nil for
// any other result.
func RefusedCard(r Result) card.Result {
	if !r.IsError || len(r.Meta) == 0 { // before the refusal escapes: a replay asks for every result
		return nil
	}
	var ref refusal
	if json.Unmarshal(r.Meta, &ref) != nil || ref.Refused == "" {
		return nil
	}
	return &card.GenericResult{Content: []card.Content{card.Text(ref.Refused)}}
}
