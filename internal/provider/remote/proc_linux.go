package remote

import (
	"os/exec"
	"syscall"
)

// dieWithDsh has the runner killed when dsh is: it holds open requests to
// the vendors and the keys to send them, and nothing else would end it.
func dieWithDsh(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
