package sandbox

import (
	"errors"
	"fmt"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
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
	abi, err := ll.LandlockGetABIVersion()
	if err != nil {
		return fmt.Errorf("the sandbox needs Landlock, which this kernel does not offer (%w): it needs Linux 5.13 or later with landlock in its lsm= boot setting", err)
	}
	if abi < minABI {
		return fmt.Errorf("the sandbox needs Landlock ABI %d (Linux 6.2 or later); this kernel has ABI %d", minABI, abi)
	}
	if mode == NetworkOff && abi < minNetworkABI {
		return fmt.Errorf("--sandbox network-off needs Landlock ABI %d (Linux 6.7 or later); this kernel has ABI %d", minNetworkABI, abi)
	}
	return nil
}

// RestrictThread applies the policy to the calling OS thread, and so to every
// process it then starts. The caller must have locked the goroutine to its
// thread (runtime.LockOSThread) and must never unlock it: the restriction
// cannot be lifted, and the thread has to end with the goroutine.
func (p *Policy) RestrictThread() error {
	cfg := landlock.V11.BestEffort()
	if p.Network {
		cfg.HandledAccessNet = 0
	}
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWDirs(p.Write...).WithRefer().IgnoreIfMissing(),
		landlock.RWFiles(writableDevices...).WithIoctlDev().IgnoreIfMissing(),
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("landlock ruleset: %w", err)
	}
	if fd < 0 {
		return errors.New("this kernel has no Landlock")
	}
	defer func() { _ = unix.Close(fd) }()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

// kernelABI is the kernel's Landlock ABI version, 0 without Landlock.
func kernelABI() int {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return abi
}
