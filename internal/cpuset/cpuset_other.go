//go:build !linux

package cpuset

import (
	"errors"
	"os/exec"
	"runtime"
)

// errNeedsLinux is what every pinning call answers off Linux.
var errNeedsLinux = errors.New("pinning to CPUs needs Linux (sched_setaffinity); run without a CPU list here")

// Affinity off Linux is 0..runtime.NumCPU()-1: the process may run on
// every CPU it can count.
func Affinity() (Set, error) { return upTo(runtime.NumCPU()), nil }

// Online off Linux is 0..runtime.NumCPU()-1.
func Online() (Set, error) { return upTo(runtime.NumCPU()), nil }

// PinThread needs Linux.
func PinThread(cpu int) error { return errNeedsLinux }

// PinThreadSet needs Linux.
func PinThreadSet(s Set) error { return errNeedsLinux }

// PinProcess needs Linux.
func PinProcess(s Set) error { return errNeedsLinux }

// Start off Linux is cmd.Start() for an empty s and an error otherwise.
func Start(cmd *exec.Cmd, s Set) error {
	if s.IsEmpty() {
		return cmd.Start()
	}
	return errNeedsLinux
}
