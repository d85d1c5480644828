//go:build unix

package record

import (
	"syscall"
	"time"
)

// ProcessCPU reads getrusage(RUSAGE_SELF): every thread of the process,
// so the loader's own cost includes its pacer, progress line and GC. Zero
// if the call fails (then the report shows no CPU figure).
func ProcessCPU() CPUTime {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return CPUTime{}
	}
	return CPUTime{
		User:   time.Duration(syscall.TimevalToNsec(ru.Utime)),
		System: time.Duration(syscall.TimevalToNsec(ru.Stime)),
	}
}
