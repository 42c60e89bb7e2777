package cli

import (
	"context"
	"fmt"

	"github.com/dsh-dev/dsh/internal/version"
)

func runVersionCmd(_ context.Context, io IO, args []string) error {
	fs := newFlags(io, "version", "", "Prints dsh's version (also: dsh --version).")
	if err := parse(io, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageErr(io, fs, "takes no arguments")
	}
	fmt.Fprintln(io.Out, "dsh", version.String())
	return nil
}
