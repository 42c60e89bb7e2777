package agent

import (
	"slices"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/models"
)

// outputBudget bounds the tool output the model context holds, in bytes: far
// more than any model's window (200k tokens is under 1 MiB of text), so it never
// changes what a model can be sent, but a session of any length — a 500 MB log
// reloaded — costs bounded memory. The oldest outputs are elided first; like
// every rule of the builder it applies live and on reload alike.
const outputBudget = 8 << 20

// msgElided replaces an output the budget dropped.
const msgElided = "(This output is no longer available: the conversation has grown far past the model's context.)"

// outputRef is where a tool result's content sits in the conversation.
type outputRef struct{ msg, part, size int }

// track notes the tool result just added as the last part of the last message.
func (b *builder) track(p provider.Part) {
	size := 0
	for _, c := range p.Content {
		size += len(c.Text) + len(c.Data)
	}
	m := len(b.msgs) - 1
	b.outputs = append(b.outputs, outputRef{msg: m, part: len(b.msgs[m].Parts) - 1, size: size})
	b.outputBytes += size
	for b.outputBytes > outputBudget && len(b.outputs) > 1 {
		old := b.outputs[0]
		b.outputs = b.outputs[1:]
		b.outputBytes -= old.size
		parts := slices.Clone(b.msgs[old.msg].Parts)
		b.est -= models.EstimatePart(parts[old.part])
		parts[old.part].Content = []card.Content{card.Text(msgElided)}
		b.est += models.EstimatePart(parts[old.part])
		b.msgs[old.msg].Parts = parts
	}
}

// overBudget says the turn has used its token budget: the results of its last
// calls are logged, and the model is not asked again.
func (a *Agent) overBudget(t *turnState) bool {
	return a.c.TokenBudget > 0 && t.usage.InputTokens+t.usage.OutputTokens >= a.c.TokenBudget
}
