//go:build !linux

package compare

import (
	"errors"
	"syscall"
	"time"

	"github.com/kvpool/kvpool/internal/cpuset"
)

// serverCPUs is kvserver's CPU under -pin, which Validate refuses here.
var serverCPUs = cpuset.Of(0)

func pinLoader() error { return errors.New("-pin needs Linux (sched_setaffinity)") }

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
