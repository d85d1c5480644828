package saturate

import (
	"fmt"
	"strconv"
)

// Busy is the share of its CPUs at which a process counts as out of CPU.
const Busy = 0.90

// Evidence is what one step tells about who limited it.
type Evidence struct {
	Pass bool
	// FellBehind: the step failed by falling behind alone (sent < 99 %
	// of the asked rate, or some requests never sent), its p99 and
	// errors within the limits.
	FellBehind bool
	// LoaderCPUShare is the loader's CPU time over the step divided by
	// elapsed × LoaderCPUs; negative: unknown.
	LoaderCPUShare float64
	LoaderCPUs     int
	// ServerCPUShare is the server's CPU time over the step divided by
	// elapsed × ServerCPUs; negative: unknown.
	ServerCPUShare float64
	ServerCPUs     int
	// Shared: the loader and the server run on the same CPUs (neither
	// pinned apart), so each share is of the one set, and what one uses
	// the other cannot.
	Shared bool
}

// Bound decides whether a step was loader-bound: its failure says what
// the loader could deliver, not what the server could sustain. A failed
// step is loader-bound when
//
//   - the loader used Busy (90 %) or more of its CPUs, whatever failed
//     (its latencies include its own queueing), or
//   - it fell behind while the server stayed under Busy of its CPUs: the
//     server had room, the sends did not come (a hiccup of the loader or
//     the machine, or the loader's own limit).
//
// Every other failure is the server's: p99 over the SLO or errors with the
// loader under Busy, or falling behind with the server at Busy or more.
// With the server's share unknown only the first rule can decide, and a
// step that fell behind is read as the server's; why says so. A step that
// passed is never loader-bound (why is empty). why reads after "at N
// req/s".
//
// Where the two share their CPUs (Shared), the server cannot reach Busy of
// them while the loader runs beside it, so the second rule looks at both
// together: a step that fell behind with the shared CPUs under Busy in all
// was loader-bound (the CPUs had room, the sends did not come); with them
// full, it is the limit of server and loader together on these CPUs, which
// is what a saturation measured on shared CPUs means, and read as the
// server's.
func Bound(e Evidence) (loaderBound bool, why string) {
	loader := usage("the loader", e.LoaderCPUShare, e.LoaderCPUs)
	server := usage("the server", e.ServerCPUShare, e.ServerCPUs)
	switch {
	case e.Pass:
		return false, ""
	case e.LoaderCPUShare >= Busy:
		if e.ServerCPUShare >= 0 {
			return true, fmt.Sprintf("the loader used %s of its %s (%s): it ran out of CPU", shareText(e.LoaderCPUShare), cpusText(e.LoaderCPUs), server)
		}
		return true, fmt.Sprintf("the loader used %s of its %s: it ran out of CPU", shareText(e.LoaderCPUShare), cpusText(e.LoaderCPUs))
	case !e.FellBehind:
		return false, fmt.Sprintf("the server's answers failed (%s, %s): the server's limit", loader, server)
	case e.ServerCPUShare < 0:
		return false, fmt.Sprintf("fell behind with %s; the server's CPU is unknown, so only the loader's own share could show the loader's limit: read as the server's", loader)
	case e.Shared && e.LoaderCPUShare >= 0 && e.ServerCPUShare+e.LoaderCPUShare < Busy:
		return true, fmt.Sprintf("fell behind while the %s the server and the loader share were only %s busy (%s, %s): the loader did not send",
			cpusText(e.ServerCPUs), shareText(e.ServerCPUShare+e.LoaderCPUShare), server, loader)
	case e.Shared:
		return false, fmt.Sprintf("fell behind with the %s the server and the loader share full (%s, %s): the limit of both together on these CPUs",
			cpusText(e.ServerCPUs), server, loader)
	case e.ServerCPUShare < Busy:
		return true, fmt.Sprintf("fell behind while the server used only %s of its %s (%s): the loader did not send", shareText(e.ServerCPUShare), cpusText(e.ServerCPUs), loader)
	}
	return false, fmt.Sprintf("fell behind with the server at %s of its %s (%s): the server's limit", shareText(e.ServerCPUShare), cpusText(e.ServerCPUs), loader)
}

// usage is "the loader at 42% of its 2 CPUs", or "the loader's CPU unknown".
func usage(who string, share float64, cpus int) string {
	if share < 0 {
		return who + "'s CPU unknown"
	}
	return fmt.Sprintf("%s at %s of its %s", who, shareText(share), cpusText(cpus))
}

// shareText is a CPU share as "42%", or "unknown".
func shareText(share float64) string {
	if share < 0 {
		return "unknown"
	}
	return strconv.FormatFloat(100*share, 'f', 0, 64) + "%"
}

func cpusText(n int) string {
	switch {
	case n <= 0:
		return "? CPUs"
	case n == 1:
		return "1 CPU"
	}
	return strconv.Itoa(n) + " CPUs"
}
