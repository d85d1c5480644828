package saturate

import (
	"fmt"
	"strconv"
	"time"

	"github.com/kvpool/kvpool/internal/loadgen/record"
)

// Busy is the share of its CPUs at which a process counts as out of CPU.
const Busy = 0.90

// LagTolerance is how late the loader's own sends may be, at p99 over an
// interval, before the interval counts as one the loader fell behind in:
// the tolerance of the step's backlog (Config.BacklogTolerance), a tenth
// of the SLO, at least 1 ms.
func LagTolerance(slo time.Duration) time.Duration {
	return max(slo/10, time.Millisecond)
}

// LoaderEvidence is a step holding only the loader's own evidence (what
// Bound reads besides the verdict and the CPU shares), from its run res:
// its intervals within the schedule, the first (the warm-up) left out,
// judged against tol (LagTolerance); ConnWaits, ConnsPeak and MaxConns.
// The caller fills in the verdict and the CPU shares.
func LoaderEvidence(res *record.Result, tol time.Duration) Step {
	m := len(res.Intervals)
	if iv := res.Config.Interval; iv > 0 && res.Config.Duration > 0 {
		m = min(m, max(int(res.Config.Duration/iv), 2))
	}
	e := Step{OwnLagKnown: res.OwnLagKnown, LagTolerance: tol,
		ConnWaits: res.ConnWaits, ConnsPeak: res.ConnsPeak, MaxConns: res.Config.MaxConns}
	if m > 1 {
		e.Judged = m - 1
		e.OwnLate, e.OwnLagP99 = ownLate(SecondsOf(res)[1:m], tol)
	}
	return e
}

// ownLate counts the intervals of judged whose own send lag's p99 was
// over tol, and returns the highest of those p99s.
func ownLate(judged []Second, tol time.Duration) (late int, worst time.Duration) {
	for _, p := range judged {
		worst = max(worst, p.OwnLagP99)
		if p.OwnLagP99 > tol {
			late++
		}
	}
	return late, worst
}

// ownLagGrew is the rule that calls falling behind the loader's: its own
// sends (those that found a connection free) were late, at p99 over the
// lag tolerance, in more of the judged intervals than the step's judge
// forgives (HoldShare: one of ten). A hiccup of one interval is not the
// loader's limit; a loader that cannot keep up is late in most.
func (e *Step) ownLagGrew() bool {
	return e.OwnLagKnown && e.OwnLate > allowedBad(e.Judged)
}

// Bound decides whether step e was loader-bound: its failure says what
// the loader could deliver, not what the server could sustain. It reads
// e's verdict (Pass, FellBehind), CPU shares and the loader's own
// evidence, nothing else. A failed step is loader-bound when
//
//   - the loader used Busy (90 %) or more of its CPUs, whatever failed
//     (its latencies include its own queueing), or
//   - it fell behind while it had connections free and its own sends
//     were late: the p99 send lag of the sends that did not wait for a
//     connection was over the lag tolerance (LagTolerance) in more of
//     the judged intervals than the step's judge forgives (ownLagGrew).
//
// Every other failure is the server's: p99 over the SLO or errors with the
// loader under Busy; falling behind because every connection was busy
// waiting on the server (the client's pool exhausted; where the
// connections reached the cap, why names -max-conns), or with the
// loader's own sends on time. That holds whatever the server's CPU share:
// a server that waits on its store (idle CPU, slow I/O) has reached its
// own limit, and so has one that shares its CPUs with the loader and
// finds them full while the loader sent on time. Where the loader's
// engine does not tell its own lag apart (OwnLagKnown false) only the
// first rule can decide, and a step that fell behind is read as the
// server's; why says so. A step that passed is never loader-bound (why is
// empty). why reads after "at N req/s".
func Bound(e *Step) (loaderBound bool, why string) {
	loader := usage("the loader", e.LoaderCPUShare, e.LoaderCPUs)
	server := usage("the server", e.ServerCPUShare, e.ServerCPUs)
	if e.Shared {
		server += " (the CPUs the loader runs on)"
	}
	switch {
	case e.Pass:
		return false, ""
	case e.LoaderCPUShare >= Busy:
		if e.ServerCPUShare >= 0 {
			return true, fmt.Sprintf("the loader used %s of its %s (%s): it ran out of CPU", ShareText(e.LoaderCPUShare), CPUsText(e.LoaderCPUs), server)
		}
		return true, fmt.Sprintf("the loader used %s of its %s: it ran out of CPU", ShareText(e.LoaderCPUShare), CPUsText(e.LoaderCPUs))
	case !e.FellBehind:
		return false, fmt.Sprintf("the server's answers failed (%s, %s): the server's limit", loader, server)
	case !e.OwnLagKnown:
		return false, fmt.Sprintf("fell behind with %s, %s; the loader's engine does not tell its own send lag from waits for a connection, so only its CPU share could show the loader's limit: read as the server's", loader, server)
	case e.ownLagGrew():
		return true, fmt.Sprintf("fell behind while it had connections free: the loader's own sends were late (p99 over %s) in %d of %d intervals, at worst %s (%s, %s): the loader did not send",
			shortDuration(e.LagTolerance), e.OwnLate, e.Judged, shortDuration(e.OwnLagP99), loader, server)
	}
	own := fmt.Sprintf("the loader's own sends late (p99 over %s) in %d of %d intervals, at worst %s", shortDuration(e.LagTolerance), e.OwnLate, e.Judged, shortDuration(e.OwnLagP99))
	if e.MaxConns > 0 && e.ConnsPeak >= e.MaxConns {
		return false, fmt.Sprintf("fell behind with every connection busy at the cap -max-conns %d (%d attempts waited for a connection; %s; %s, %s): the server's limit",
			e.MaxConns, e.ConnWaits, own, loader, server)
	}
	return false, fmt.Sprintf("fell behind with the loader's own sends on time (%s; %d attempts waited for a connection; %s, %s): the server's limit",
		own, e.ConnWaits, loader, server)
}

// usage is "the loader at 42% of its 2 CPUs", or "the loader's CPU unknown".
func usage(who string, share float64, cpus int) string {
	if share < 0 {
		return who + "'s CPU unknown"
	}
	return fmt.Sprintf("%s at %s of its %s", who, ShareText(share), CPUsText(cpus))
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
