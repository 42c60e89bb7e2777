package card

import "fmt"

// The cards of the calls that ask the user: a plan to approve and a question
// to answer. Both exist on both sides: the call shows what is asked, the result
// what was answered.
const (
	KindPlan     Kind = "plan"
	KindQuestion Kind = "question"
)

// Choice is one answer a question offers.
type Choice struct {
	ID          string `json:"id"`
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// Answer is what the user answered: a choice (ID names it, Text is its label)
// or their own words (ID empty). The zero Answer is no answer: the user chose
// none of the choices and wrote nothing.
type Answer struct {
	ID   string `json:"id,omitempty"`
	Text string `json:"text,omitempty"`
}

// None reports whether the user gave no answer.
func (a Answer) None() bool { return a.ID == "" && a.Text == "" }

// PlanCall is a plan the agent proposes before it changes anything: Markdown,
// the files it intends to touch and, optionally, its steps.
type PlanCall struct {
	Title string   `json:"title"`
	Plan  string   `json:"plan"`
	Files []string `json:"files,omitempty"`
	Steps []string `json:"steps,omitempty"`
}

// PlanResult is the plan with the user's answer to "Implement this plan?".
// Mode is the permission mode the session continues in; empty when the user
// keeps planning (Answer then holds what they said, if anything).
type PlanResult struct {
	Title   string   `json:"title,omitempty"`
	Plan    string   `json:"plan"`
	Files   []string `json:"files,omitempty"`
	Steps   []string `json:"steps,omitempty"`
	Choices []Choice `json:"choices"`
	Answer  Answer   `json:"answer"`
	Mode    string   `json:"mode,omitempty"`
}

// QuestionCall is a question the agent puts to the user. FreeText says the
// user may answer in their own words instead of a choice.
type QuestionCall struct {
	Title    string   `json:"title"`
	Question string   `json:"question"`
	Choices  []Choice `json:"choices"`
	FreeText bool     `json:"freeText,omitzero"`
}

// QuestionResult is a question with the user's answer.
type QuestionResult struct {
	Title    string   `json:"title,omitempty"`
	Question string   `json:"question"`
	Choices  []Choice `json:"choices"`
	Answer   Answer   `json:"answer"`
}

func (*PlanCall) isCall()     {}
func (*QuestionCall) isCall() {}

func (*PlanResult) isResult()     {}
func (*QuestionResult) isResult() {}

// Kind implements Call.
func (*PlanCall) Kind() Kind { return KindPlan }

// Kind implements Call.
func (*QuestionCall) Kind() Kind { return KindQuestion }

// Kind implements Result.
func (*PlanResult) Kind() Kind { return KindPlan }

// Kind implements Result.
func (*QuestionResult) Kind() Kind { return KindQuestion }

type (
	planCall       PlanCall
	questionCall   QuestionCall
	planResult     PlanResult
	questionResult QuestionResult
)

// MarshalJSON writes the card with its "card" discriminator.
func (c *PlanCall) MarshalJSON() ([]byte, error) { return marshalTagged(KindPlan, (*planCall)(c)) }

// MarshalJSON writes the card with its "card" discriminator.
func (c *QuestionCall) MarshalJSON() ([]byte, error) {
	return marshalTagged(KindQuestion, (*questionCall)(c))
}

// MarshalJSON writes the card with its "card" discriminator.
func (c *PlanResult) MarshalJSON() ([]byte, error) {
	return marshalTagged(KindPlan, (*planResult)(c))
}

// MarshalJSON writes the card with its "card" discriminator.
func (c *QuestionResult) MarshalJSON() ([]byte, error) {
	return marshalTagged(KindQuestion, (*questionResult)(c))
}

// decodeAskCall decodes the call cards of this file.
func decodeAskCall(data []byte, k Kind) (Call, error) {
	if k == KindPlan {
		f, err := decodeTagged[planCall](data, k)
		if err != nil {
			return nil, err
		}
		return (*PlanCall)(f), nil
	}
	f, err := decodeTagged[questionCall](data, k)
	if err != nil {
		return nil, err
	}
	return (*QuestionCall)(f), nil
}

// decodeAskResult decodes the result cards of this file.
func decodeAskResult(data []byte, k Kind) (Result, error) {
	if k == KindPlan {
		f, err := decodeTagged[planResult](data, k)
		if err != nil {
			return nil, err
		}
		return (*PlanResult)(f), nil
	}
	f, err := decodeTagged[questionResult](data, k)
	if err != nil {
		return nil, err
	}
	return (*QuestionResult)(f), nil
}

// validChoices checks what a question's types cannot say: there are choices,
// each with an id and a label, no id twice; an answer's id is one of them.
func validChoices(k Kind, cs []Choice, a Answer) error {
	if cs == nil {
		return fmt.Errorf("%w: %s: missing \"choices\"", ErrDecode, k)
	}
	seen := map[string]bool{}
	for i, c := range cs {
		if c.ID == "" || c.Label == "" {
			return fmt.Errorf("%w: %s: choices[%d]: empty id or label", ErrDecode, k, i)
		}
		if seen[c.ID] {
			return fmt.Errorf("%w: %s: choices[%d]: id %q twice", ErrDecode, k, i, c.ID)
		}
		seen[c.ID] = true
	}
	if a.ID != "" && !seen[a.ID] {
		return fmt.Errorf("%w: %s: the answer %q is not one of the choices", ErrDecode, k, a.ID)
	}
	return nil
}

// Outcome says in words what the user answered, the same in every consumer.
func (r *PlanResult) Outcome() string {
	switch {
	case r.Mode != "":
		return "Approved: implementing in " + r.Mode + " mode"
	case r.Answer.None():
		return "Not approved: no answer"
	case r.Answer.ID == "":
		return "Keep planning: " + r.Answer.Text
	}
	return "Keep planning"
}

// Outcome says in words what the user answered, the same in every consumer.
func (r *QuestionResult) Outcome() string {
	switch {
	case r.Answer.None():
		return "No answer: none of the options"
	case r.Answer.ID == "":
		return "Your own answer: " + r.Answer.Text
	}
	return r.Answer.Text
}
