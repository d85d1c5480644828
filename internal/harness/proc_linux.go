package harness

import (
	"os"
	"syscall"
)

// dieWithParent makes the kernel kill the kvserver if this process dies
// first, so an interrupted run leaves no server behind holding its data,
// and starts it in a process group of its own: a terminal's Ctrl-C then
// reaches this process alone, which stops its servers in order and
// reports the run interrupted, where a server killed by the same signal
// first made the step it served look failed.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// interruptedBySIGINT tells whether an exited process was killed by
// SIGINT.
func interruptedBySIGINT(ps *os.ProcessState) bool {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGINT
}
