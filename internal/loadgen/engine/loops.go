package engine

import (
	"fmt"
	"math"

	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/kvpool/kvpool/internal/cpuset"
)

// OneLoopRate is about what one event loop of the fast engine sends per
// second when nothing else limits it, on the 2-core VM this lab was
// built on (`loadtest attack -loops 1` against `loadtest bare-server`,
// each on a CPU of its own; the runs are in docs/load-lab.md, Several
// cores): the lowest of three, rounded down. A faster CPU sends more; the
// figure only decides when a second loop is worth its cost.
const OneLoopRate = 100_000

// loopHeadroom is the share of OneLoopRate that one loop is given before
// -loops 0 adds another: a loop asked for close to all it can send falls
// behind at every hiccup (a GC, a descheduled thread) and has no time left
// for the responses' bursts, whereas a second loop below that costs 5–20 %
// more CPU per request (two threads waking where one would do) and buys
// nothing.
const loopHeadroom = 0.5

// loopsFor chooses the loops of a run that asked for -loops 0, and says
// why in words (Result.LoopsWhy): the fewest its rate needs, since every
// loop past the first costs CPU per request without sending more, and all
// of its CPU set where the loader must not be the limit (a closed loop, a
// saturation search: both ask for as much as the server answers). Never
// more loops than CPUs, nor than connections (each loop needs one of its
// own).
//
// rate is this loader's share of the schedule at its highest (req/s; 0:
// closed loop): a spike's rate where there is one, since the loops must
// send that while it lasts; conns its connections, cpus the size of its
// CPU set, search whether the run is a step of a saturation search.
func loopsFor(rate float64, conns, cpus int, search bool) (n int, why string) {
	most := max(1, min(cpus, conns))
	limit := ""
	switch {
	case most == conns && conns < cpus:
		limit = fmt.Sprintf(", one per connection (-conns %d)", conns)
	case most > 1 || cpus == 1:
		limit = fmt.Sprintf(", one per CPU of the %s", cpuset.CPUsText(cpus))
	}
	switch {
	case rate <= 0:
		return most, fmt.Sprintf("%s: a closed loop takes every CPU it may%s", loopsText(most), limit)
	case search:
		return most, fmt.Sprintf("%s: a saturation search must not be bounded by the loader%s", loopsText(most), limit)
	}
	per := OneLoopRate * loopHeadroom
	if rate <= per {
		return 1, fmt.Sprintf("1 loop: %s req/s is within one loop's ~%s req/s", thousands(rate), thousands(per))
	}
	need := int(min(math.Ceil(rate/per), float64(math.MaxInt32)))
	n = min(need, most)
	why = fmt.Sprintf("%s: %s req/s needs %s at ~%s req/s each", loopsText(n), thousands(rate), thousands(float64(need)), thousands(per))
	if n < need {
		why += fmt.Sprintf("; capped at %d%s", n, limit)
	}
	return n, why
}

// loopsText is "1 loop", "2 loops".
func loopsText(n int) string {
	if n == 1 {
		return "1 loop"
	}
	return fmt.Sprintf("%d loops", n)
}

// thousands formats a rate as a whole number with thousands separators:
// 5000 → "5,000".
func thousands(x float64) string {
	return message.NewPrinter(language.English).Sprintf("%d", int64(math.Round(x)))
}
