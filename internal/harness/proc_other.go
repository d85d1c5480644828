//go:build !linux

package harness

import (
	"os"
	"syscall"
)

// dieWithParent: only Linux can tie a child's life to its parent's.
func dieWithParent() *syscall.SysProcAttr { return nil }

// interruptedBySIGINT: a process group of its own is Linux-only here, so
// nothing waits for an interrupt elsewhere.
func interruptedBySIGINT(*os.ProcessState) bool { return false }
