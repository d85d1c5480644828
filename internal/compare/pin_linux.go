package compare

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Cores of -pin: kvserver on serverCore, the loader on loaderCore.
const (
	serverCore = "0"
	loaderCore = 1
)

// pinLoader binds every thread of this process to loaderCore and sizes
// the scheduler to that one core (the runtime read the affinity only at
// start). Threads the runtime starts later are cloned from a bound one
// and inherit the mask.
func pinLoader() error {
	runtime.GOMAXPROCS(1)
	var set unix.CPUSet
	set.Set(loaderCore)
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("cannot list this process's threads to pin them: %w", err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
			return fmt.Errorf("cannot pin the loader to core %d: %w", loaderCore, err)
		}
	}
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
