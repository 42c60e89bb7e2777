package checkpoint

import (
	"os/exec"
	"syscall"
)

// idle lowers process pid's priority, so its work goes behind the session's
// own. Not SCHED_IDLE: on a busy machine an idle-class git can wait past the
// snapshot's bound, which turns checkpoints off for the session, and an
// unprivileged process cannot raise it back once a prompt waits for it.
func idle(pid int) {
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, pid, niceness)
}

// dieWithDsh has git killed when dsh is: a walk or an index write left
// running by a dsh killed with SIGKILL would go on writing the store, and
// outlive it.
func dieWithDsh(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
