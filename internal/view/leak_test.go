package view

import (
	"testing"

	"go.uber.org/goleak"
)

// Every goroutine a test starts (live output, subscriptions, timers) must end.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
