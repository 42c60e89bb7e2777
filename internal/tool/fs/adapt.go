package fs

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// rawMeta is the meta of the file tools while their presenters still narrow
// persisted JSON by hand.
type rawMeta = jsontext.Value

func execRaw[P any](f func(context.Context, tool.Env, P) tool.Result) func(context.Context, tool.Env, P, *rawMeta) (tool.Result, *rawMeta, error) {
	return func(ctx context.Context, env tool.Env, p P, _ *rawMeta) (tool.Result, *rawMeta, error) {
		r := f(ctx, env, p)
		if len(r.Meta) == 0 {
			return r, nil, nil
		}
		m := r.Meta
		r.Meta = nil
		return r, &m, nil
	}
}

func callRaw[P any](f func(P) card.Call) func(P, *rawMeta) card.Call {
	return func(p P, _ *rawMeta) card.Call { return f(p) }
}

func resultRaw[P any](f func(P, tool.Result) card.Result) func(P, tool.Result, *rawMeta) card.Result {
	return func(p P, r tool.Result, _ *rawMeta) card.Result { return f(p, r) }
}
