package compare

import (
	"fmt"
	"time"

	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/saturate"
)

// fixedInterval is the fixed-rate step's interval: the saturation
// search's rule (a tenth of the step after a warm-up, at most a second),
// so that even a short step has intervals enough to show a backlog grow.
func fixedInterval(d time.Duration) time.Duration {
	sc := saturate.Config{Step: d}
	return sc.Interval()
}

// fixedBacklog says how a fixed-rate step's backlog grew by the
// searches' rule (saturate.Config.BacklogGrew), "" where it did not: its
// latencies are then a growing queue's, and depend on the step's length.
func fixedBacklog(res *record.Result, slo time.Duration) string {
	sc := saturate.Config{SLO: slo}
	// The intervals of the schedule but the first (the warm-up), as the
	// searches judge them; the drain after it is not the step's.
	judged := saturate.SecondsOf(res)
	if iv := res.Config.Interval; iv > 0 {
		judged = judged[:min(len(judged), int(res.Config.Duration/iv))]
	}
	if len(judged) > 0 {
		judged = judged[1:]
	}
	return sc.BacklogGrew(judged, res.Config.Rate)
}

// fixedBehind says how a fixed-rate step fell behind its schedule by lc,
// checkLoader's record of it ("" where it kept to it).
func fixedBehind(res *record.Result, lc result.LoaderCheck) string {
	switch {
	case lc.Backlog != "":
		return lc.Backlog
	case !lc.KeptUp:
		return fmt.Sprintf("sent %.0f of %.0f req/s asked on schedule, %d never sent", lc.SendRate, lc.Asked, res.Unsent())
	}
	return ""
}
