package bash

import (
	"testing"

	"go.uber.org/goleak"
)

// Every goroutine a command starts (readers, waiters, live output) must end.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
