package providers

import (
	"os"
	"testing"

	"github.com/dsh-dev/dsh/internal/provider/remote/runnertest"
)

func TestMain(m *testing.M) { os.Exit(runnertest.Main(m)) }
