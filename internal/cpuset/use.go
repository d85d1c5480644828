package cpuset

import (
	"fmt"
	"strconv"
	"time"
)

// Busy is the share of its CPUs at which a process counts as out of CPU:
// a loader that used this much measured its own limit, not the server's.
const Busy = 0.90

// Use is how much of its CPUs one side (the loader, the server) used over
// a span: Share is its CPU time over the span × CPUs (negative: unknown),
// CPUs how many it had (0: unknown).
type Use struct {
	Share float64
	CPUs  int
}

// Unknown is a Use nobody read.
var Unknown = Use{Share: -1}

// UseOf is cpu over span on cpus CPUs; its share is unknown where span or
// cpus is not above 0 or cpu is negative (a counter that went backwards).
func UseOf(cpu, span time.Duration, cpus int) Use {
	if span <= 0 || cpus < 1 || cpu < 0 {
		return Use{Share: -1, CPUs: cpus}
	}
	return Use{Share: cpu.Seconds() / (span.Seconds() * float64(cpus)), CPUs: cpus}
}

// Known tells whether u's share was read.
func (u Use) Known() bool { return u.Share >= 0 }

// OutOfCPU tells whether u reached Busy: a loader there is loader-bound,
// whatever else failed.
func (u Use) OutOfCPU() bool { return u.Share >= Busy }

// Text is u as a sentence about who: "the loader at 42% of its 2 CPUs",
// or "the loader's CPU unknown".
func (u Use) Text(who string) string {
	if !u.Known() {
		return who + "'s CPU unknown"
	}
	return fmt.Sprintf("%s at %s of its %s", who, ShareText(u.Share), CPUsText(u.CPUs))
}

// ShareText is a CPU share as "42%", or "unknown".
func ShareText(share float64) string {
	if share < 0 {
		return "unknown"
	}
	return strconv.FormatFloat(100*share, 'f', 0, 64) + "%"
}

// CPUsText is "1 CPU", "8 CPUs", or "? CPUs" where n is unknown.
func CPUsText(n int) string {
	switch {
	case n <= 0:
		return "? CPUs"
	case n == 1:
		return "1 CPU"
	}
	return strconv.Itoa(n) + " CPUs"
}
