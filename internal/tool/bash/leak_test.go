package bash

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// The test binary doubles as the attacker that sandbox tests run as a command
// (see attack).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "attack" {
		os.Exit(attack(os.Args[2:]))
	}
	goleak.VerifyTestMain(m)
}
