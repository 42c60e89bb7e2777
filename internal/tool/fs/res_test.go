package fs

import "github.com/dsh-dev/dsh/internal/tool"

// res unwraps a Run for tests: a harness error fails loudly.
func res(r tool.Result, err error) tool.Result {
	if err != nil {
		panic(err)
	}
	return r
}
