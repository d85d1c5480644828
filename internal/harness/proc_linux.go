package harness

import "syscall"

// dieWithParent makes the kernel kill the kvserver if this process dies
// first, so an interrupted run leaves no server behind holding its data.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
