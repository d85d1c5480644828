package engine

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/loadgen/bareserver"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/loadgentest"
	"github.com/kvpool/kvpool/internal/loadgen/schedule"
)

// -loops 0 sizes the loops to the spike's rate, not -rate nor the
// average: 40,000 req/s fits one loop, a 2x spike to 80,000 needs two.
func TestSpikeSizesTheLoopsByItsPeak(t *testing.T) {
	cfg := config.Default()
	cfg.Rate, cfg.Duration = 40_000, time.Minute
	cfg.Spike = schedule.Spike{Factor: 2, At: 20 * time.Second, Length: 10 * time.Second}
	require.NoError(t, cfg.Validate())
	p, release := place(&cfg)
	release()
	assert.Equal(t, min(2, placeCPUs()), p.loops)
	assert.Contains(t, p.loopsWhy, "80,000 req/s needs 2")

	cfg.Spike = schedule.Spike{}
	p, release = place(&cfg)
	release()
	assert.Equal(t, 1, p.loops, "without the spike one loop")
}

// placeCPUs is how many CPUs place counts where -cpus is not given.
func placeCPUs() int {
	if allowed, err := cpuset.Affinity(); err == nil && !allowed.IsEmpty() {
		return allowed.Len()
	}
	return runtime.NumCPU()
}

// A short open-model run with a spike sends every request the piecewise
// schedule plans, once each, at its time in that schedule: 2,000 req/s
// for 600 ms with 3x:200ms@200ms is 200 requests intended in each 100 ms
// before and after the spike and 600 in each during it, 2,000 in all,
// over two loops, each of which spikes with the run.
func TestSpikeRunFollowsThePiecewiseSchedule(t *testing.T) {
	bothSenders(t, func(t *testing.T, mode func(config.Config) config.Config) {
		url := loadgentest.ServeHandler(t, bareserver.Handler)
		cfg := testConfig(url, 2000, 600*time.Millisecond)
		cfg.Spike = schedule.Spike{Factor: 3, At: 200 * time.Millisecond, Length: 200 * time.Millisecond}
		cfg.Conns, cfg.MaxConns, cfg.Loops = 8, 16, 2
		cfg.Interval = 100 * time.Millisecond
		cfg.KeepRecords = true
		g, res := runGroup(t, context.Background(), mode(cfg))

		require.Equal(t, uint64(2000), res.Planned, "400 + 1,200 + 400")
		require.Equal(t, int64(res.Planned), res.Sent)
		assert.Zero(t, res.ErrorCount)
		for l, e := range g.engines {
			assert.Equal(t, uint64(1000), e.planned, "loop %d plans every other request", l)
			assert.Equal(t, 6000.0/2, e.rate(), "loop %d is sized to its share of the peak", l)
		}

		whole := cfg.Schedule()
		seen := make([]bool, res.Planned)
		perInterval := make([]int, 6)
		for _, rc := range res.Records {
			require.Less(t, rc.Seq, res.Planned)
			require.False(t, seen[rc.Seq], "request %d recorded twice", rc.Seq)
			seen[rc.Seq] = true
			require.Equal(t, whole.At(rc.Seq), rc.Intended, "request %d: intended time", rc.Seq)
			require.GreaterOrEqual(t, rc.Sent, rc.Intended, "request %d was sent before it was due", rc.Seq)
			perInterval[rc.Intended/int64(100*time.Millisecond)]++
		}
		assert.Len(t, res.Records, int(res.Sent))
		assert.Equal(t, []int{200, 200, 600, 600, 200, 200}, perInterval, "requests intended per 100 ms")
		// The interval series counts actual sends, which lag a little:
		// only their sum is exact.
		var sent int64
		for _, p := range res.Intervals {
			sent += p.Sent
		}
		assert.Equal(t, res.Sent, sent)
		assert.InDelta(t, 2000.0/0.6, res.Config.AskedRate(), 1e-9, "asked: the average, Planned over Duration")
	})
}
