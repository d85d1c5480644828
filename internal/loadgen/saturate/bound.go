package saturate

import (
	"fmt"
	"time"

	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/loadgen/record"
)

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
// e's verdict (Pass, FellBehind), CPU use and the loader's own evidence,
// nothing else. A failed step is loader-bound when
//
//   - the loader used cpuset.Busy (90 %) or more of its CPUs, whatever
//     failed (its latencies include its own queueing: CPUBound), or
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
	ldr, srv := e.Loader(), e.Server()
	loader, server := ldr.Text("the loader"), serverText(srv, e.Shared)
	switch {
	case e.Pass:
		return false, ""
	case ldr.OutOfCPU():
		return CPUBound(ldr, srv, e.Shared)
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

// CPUBound is Bound's first rule alone, all that can judge a run without
// a schedule to fall behind (a closed loop): loader-bound where the
// loader ran out of CPU (cpuset.Use.OutOfCPU), with the figures; else
// false and "". shared: the server ran on the loader's CPUs.
func CPUBound(loader, server cpuset.Use, shared bool) (bool, string) {
	if !loader.OutOfCPU() {
		return false, ""
	}
	if server.Known() {
		return true, fmt.Sprintf("the loader used %s of its %s (%s): it ran out of CPU", cpuset.ShareText(loader.Share), cpuset.CPUsText(loader.CPUs), serverText(server, shared))
	}
	return true, fmt.Sprintf("the loader used %s of its %s: it ran out of CPU", cpuset.ShareText(loader.Share), cpuset.CPUsText(loader.CPUs))
}

// serverText is the server's CPU use as Bound's figures give it.
func serverText(u cpuset.Use, shared bool) string {
	if shared {
		return u.Text("the server") + " (the CPUs the loader runs on)"
	}
	return u.Text("the server")
}
