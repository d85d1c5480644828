package compare

import (
	"runtime"
	"syscall"
	"time"

	"github.com/kvpool/kvpool/internal/cpuset"
)

// CPUs of -pin: kvserver on serverCPUs, the loader on loaderCPUs.
var (
	serverCPUs = cpuset.Of(0)
	loaderCPUs = cpuset.Of(1)
)

// pinLoader binds every thread of this process to loaderCPUs and sizes
// the scheduler to them: the runtime read the affinity at start and would
// follow the new mask only at a later periodic check. Threads the runtime
// starts later are cloned from a bound one and inherit the mask.
func pinLoader() error {
	if err := cpuset.PinProcess(loaderCPUs); err != nil {
		return err
	}
	runtime.GOMAXPROCS(loaderCPUs.Len())
	return nil
}

// processCPU is this process's user+system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
