package tool

// res unwraps a Run for tests: a harness error fails loudly.
func res(r Result, err error) Result {
	if err != nil {
		panic(err)
	}
	return r
}
