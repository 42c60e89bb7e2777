// Command dsh is a coding-agent harness; see the README.
package main

import (
	"os"

	"github.com/dsh-dev/dsh/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.System()))
}
