package compare

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/loadgen/record"
)

// TestFixedBehind: a fixed-rate step falls behind where the loader did
// not send on schedule, or where the backlog grew over its judged
// intervals (the searches' rule); the warm-up and the drain after the
// schedule do not count. The loader's check says the same.
func TestFixedBehind(t *testing.T) {
	assert.Equal(t, time.Second, fixedInterval(20*time.Second))
	assert.Equal(t, 136*time.Millisecond, fixedInterval(1500*time.Millisecond))

	run := func(lagMs ...float64) *record.Result {
		res := &record.Result{}
		res.Config.Rate, res.Config.Duration, res.Config.Interval = 1000, 10*time.Second, time.Second
		for i, l := range lagMs {
			res.Intervals = append(res.Intervals, record.Interval{StartS: float64(i), LengthS: 1, Sent: 1000, SendLagP99Us: 1000 * l, InFlight: 5})
		}
		return res
	}
	slo := 100 * time.Millisecond
	checked := func(lc result.LoaderCheck, res *record.Result) result.LoaderCheck {
		return withBacklog(lc, fixedBacklog(res, slo))
	}
	kept := result.LoaderCheck{KeptUp: true, Asked: 1000, SendRate: 1000}
	steady := run(500, 1, 1, 1, 1, 1, 1, 1, 1, 1, 900) // a slow warm-up, and a drain interval
	assert.Empty(t, fixedBacklog(steady, slo))
	lc := checked(kept, steady)
	assert.True(t, lc.KeptUp)
	assert.Empty(t, fixedBehind(steady, lc))

	growing := run(1, 1, 1, 1, 1, 1, 30, 40, 50, 60)
	lc = checked(kept, growing)
	assert.False(t, lc.KeptUp, "the loader sent on schedule, and the step did not keep up")
	assert.Contains(t, lc.Backlog, "backlog grew: send lag p99")
	assert.Equal(t, lc.Backlog, fixedBehind(growing, lc))

	short := checked(result.LoaderCheck{Asked: 1000, SendRate: 900}, growing)
	assert.Empty(t, short.Backlog, "a step that was not sent on schedule is said to be so first")
	assert.Contains(t, fixedBehind(growing, short), "sent 900 of 1000 req/s asked on schedule")
}
