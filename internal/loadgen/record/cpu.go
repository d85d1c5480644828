package record

import (
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/kvpool/kvpool/internal/cpuset"
)

// CPUTime is the CPU this process has used.
type CPUTime struct {
	User, System time.Duration
}

// Total is user plus system time.
func (c CPUTime) Total() time.Duration { return c.User + c.System }

// Use is c over span on cpus CPUs; its share is unknown where c is zero
// (getrusage failed).
func (c CPUTime) Use(span time.Duration, cpus int) cpuset.Use {
	if c.Total() <= 0 {
		return cpuset.Use{Share: -1, CPUs: cpus}
	}
	return cpuset.UseOf(c.Total(), span, cpus)
}

// Sub returns c - o.
func (c CPUTime) Sub(o CPUTime) CPUTime {
	return CPUTime{User: c.User - o.User, System: c.System - o.System}
}

// WithCPUProfile runs f under a CPU profile of this process written to
// path ("" = none): -cpuprofile, the loader's own profile.
func WithCPUProfile[T any](path string, f func() (T, error)) (res T, err error) {
	if path == "" {
		return f()
	}
	pf, err := os.Create(path)
	if err != nil {
		return res, fmt.Errorf("cannot create CPU profile: %w", err)
	}
	defer pf.Close()
	if err := pprof.StartCPUProfile(pf); err != nil {
		return res, fmt.Errorf("cannot start CPU profile: %w", err)
	}
	defer pprof.StopCPUProfile()
	return f()
}
