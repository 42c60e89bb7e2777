package cli

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/dsh-dev/dsh/internal/provider/remote"
	"github.com/dsh-dev/dsh/internal/provider/vendors"
	"github.com/dsh-dev/dsh/internal/sandbox"
)

// The scripts in testdata/script drive the real dsh command line end to end.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"dsh":         func() { os.Exit(Main(os.Args[1:], System())) },
		"dsh-lspstub": func() { os.Exit(lspStub()) },
		// The model runner, which DSH_MODEL_RUNNER names (see Setup).
		"dsh-model": func() {
			if err := remote.Serve(os.Stdin, os.Stdout, vendors.Backend{}); err != nil {
				os.Exit(1)
			}
			os.Exit(0)
		},
	})
}

func TestScripts(t *testing.T) {
	overloaded := overloadedServer(t)
	search := searchServer(t)
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			e.Setenv("OVERLOADED_URL", overloaded.URL)
			e.Setenv("SEARCH_URL", search.URL)
			e.Setenv("XDG_STATE_HOME", e.WorkDir+"/state")
			e.Setenv("NO_COLOR", "1")
			e.Setenv("HOME", e.WorkDir+"/home")
			runner, err := onPath(e.Getenv("PATH"), "dsh-model")
			if err != nil {
				return err
			}
			e.Setenv(remote.RunnerEnv, runner)
			e.Values[netServersKey] = &netServers{hits: map[string]int{}, udp: map[string]*net.UDPConn{}}
			return nil
		},
		Cmds: netCmds(),
		Condition: func(cond string) (bool, error) {
			if cond == "sandbox" { // commands can run confined here
				return sandbox.Check(sandbox.On) == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}

// onPath is where name is in the directories of path, which testscript gives
// its commands.
func onPath(path, name string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil && filepath.IsAbs(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not on the scripts' PATH", name)
}
