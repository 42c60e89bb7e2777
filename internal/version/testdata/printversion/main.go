// Command printversion prints version.String, for the -ldflags test.
package main

import (
	"fmt"

	"github.com/dsh-dev/dsh/internal/version"
)

func main() { fmt.Println(version.String()) }
