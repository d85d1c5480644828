package main

import "syscall"

// dieWithParent makes the kernel kill the kvserver if crashtest dies first,
// so an interrupted run leaves no server behind holding its data dir.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
