package session

import (
	"fmt"
	"os"
)

// Remove deletes the log at path under the writer's lock: a log another
// process has open is refused (the error says which process), and one removed
// here cannot be opened half-way by another, which finds the lock taken or the
// file gone.
func Remove(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("remove session log: %w", err)
	}
	defer func() { _ = f.Close() }() // the lock goes with it, after the name
	if err := lockFile(f); err != nil {
		return fmt.Errorf("session log %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("remove session log: %w", err)
	}
	return nil
}
