package card

import "strconv"

// KindTask is the card of a call that hands a task to a subagent: a child
// session with its own log, whose cards consumers nest under this one.
const KindTask Kind = "task"

// TaskCall is a task handed to a subagent: which agent, what it was asked.
type TaskCall struct {
	Title  string `json:"title"`
	Agent  string `json:"agent"`
	Prompt string `json:"prompt"`
}

// TaskResult is a finished task. Session names the child session whose log
// holds the subagent's own calls; Text is its final answer (what the parent
// model read); Calls how many tool calls it made and Stop how its turn ended.
type TaskResult struct {
	Title   string `json:"title,omitempty"`
	Agent   string `json:"agent"`
	Session string `json:"session"`
	Text    string `json:"text"`
	Calls   int    `json:"calls,omitzero"`
	Stop    string `json:"stop,omitempty"`
	Tokens  int64  `json:"tokens,omitzero"`
}

func (*TaskCall) isCall()     {}
func (*TaskResult) isResult() {}

// Kind implements Call.
func (*TaskCall) Kind() Kind { return KindTask }

// Kind implements Result.
func (*TaskResult) Kind() Kind { return KindTask }

type (
	taskCall   TaskCall
	taskResult TaskResult
)

// MarshalJSON writes the card with its "card" discriminator.
func (c *TaskCall) MarshalJSON() ([]byte, error) { return marshalTagged(KindTask, (*taskCall)(c)) }

// MarshalJSON writes the card with its "card" discriminator.
func (c *TaskResult) MarshalJSON() ([]byte, error) {
	return marshalTagged(KindTask, (*taskResult)(c))
}

// Summary is the task's outcome in one line, the same in every consumer:
// the agent, its calls and tokens, and how it ended when it did not finish.
func (r *TaskResult) Summary() string {
	s := r.Agent + " · " + strconv.Itoa(r.Calls) + " tool call"
	if r.Calls != 1 {
		s += "s"
	}
	if r.Tokens > 0 {
		s += " · " + strconv.FormatInt(r.Tokens, 10) + " tokens"
	}
	if r.Stop != "" && r.Stop != "end_turn" {
		s += " · " + r.Stop
	}
	return s
}
