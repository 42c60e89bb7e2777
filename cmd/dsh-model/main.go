// Command dsh-model is dsh's model runner: dsh starts it at the first model
// call and asks it, over its standard input and output, to stream from the
// vendors' APIs through their SDKs, which dsh itself does not load. It is
// not meant to be run by hand.
package main

import (
	"fmt"
	"os"

	"github.com/dsh-dev/dsh/internal/provider/remote"
	"github.com/dsh-dev/dsh/internal/provider/vendors"
	"github.com/dsh-dev/dsh/internal/secretenv"
)

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "dsh-model is started by dsh, which talks to it on its standard input and output; it takes no arguments")
		os.Exit(2)
	}
	// The runner holds the keys dsh sends it: like dsh, it is kept from the
	// commands dsh runs, which run as the same user.
	if err := secretenv.Hide(); err != nil {
		fmt.Fprintln(os.Stderr, "dsh-model: warning:", err)
	}
	if err := remote.Serve(os.Stdin, os.Stdout, vendors.Backend{}); err != nil {
		fmt.Fprintln(os.Stderr, "dsh-model:", err)
		os.Exit(1)
	}
}
