// Command dsh is a coding-agent harness; see the README.
package main

import (
	"fmt"
	"os"

	"github.com/dsh-dev/dsh/internal/cli"
	"github.com/dsh-dev/dsh/internal/proxyenv"
	"github.com/dsh-dev/dsh/internal/secretenv"
)

func main() {
	// First: the keys leave the environment that commands could read.
	if err := secretenv.Hide(); err != nil {
		fmt.Fprintf(os.Stderr, "dsh: warning: %v\n", err)
	}
	proxyenv.Use(secretenv.Getenv) // a proxy with a password was hidden too
	io := cli.System()
	io.Getenv = secretenv.Getenv
	os.Exit(cli.Main(os.Args[1:], io))
}
