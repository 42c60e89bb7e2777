package sandbox

import (
	"errors"
	"fmt"

	"github.com/dsh-dev/dsh/internal/sandbox/confine"
)

// minABI is the Landlock version the sandbox needs: 3 is the first that also
// controls truncation, without which a command could empty any file it can
// open; the network needs 4.
const minABI, minNetworkABI = 3, 4

// Check reports whether this kernel can enforce mode: nil for Off and when it
// can, else an error that says what is missing.
func Check(mode Mode) error {
	if !mode.Enabled() {
		return nil
	}
	abi := confine.ABI()
	if abi == 0 {
		return errors.New("the sandbox needs Landlock, which this kernel does not offer: it needs Linux 5.13 or later with landlock in its lsm= boot setting")
	}
	if abi < minABI {
		return fmt.Errorf("the sandbox needs Landlock ABI %d (Linux 6.2 or later); this kernel has ABI %d", minABI, abi)
	}
	if mode == NetworkOff && abi < minNetworkABI {
		return fmt.Errorf("--sandbox network-off needs Landlock ABI %d (Linux 6.7 or later); this kernel has ABI %d", minNetworkABI, abi)
	}
	return nil
}
