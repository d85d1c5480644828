package loadgen

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/loadgen/bareserver"
	"github.com/kvpool/kvpool/internal/loadgen/loadgentest"
	"github.com/kvpool/kvpool/internal/loadgen/schedule"
)

func TestConfigRefusesBadSpikes(t *testing.T) {
	f := func(want string, change func(c *Config)) {
		t.Helper()
		c := DefaultConfig()
		c.Duration = time.Minute
		change(&c)
		err := c.Validate()
		require.Error(t, err, want)
		assert.Contains(t, err.Error(), want)
	}
	spike := schedule.Spike{Factor: 2, At: 20 * time.Second, Length: 10 * time.Second}
	f("-spike 2x:10s@20s needs the open model (-rate above 0)", func(c *Config) { c.Rate, c.Spike = 0, spike })
	f("-spike 2x:10s@20s needs -engine fast: vegeta's attacker paces one constant rate", func(c *Config) { c.Engine, c.Spike = EngineVegeta, spike })
	f("-spike 2x:10s@20s starts at 20s and lasts 10s, ending at 30s, past -duration 25s", func(c *Config) { c.Duration, c.Spike = 25*time.Second, spike })
	f("give either a factor or a rate", func(c *Config) { c.Spike = schedule.Spike{Factor: 2, Rate: 5, Length: time.Second} })
	f("the length must be positive", func(c *Config) { c.Spike = schedule.Spike{Factor: 2} })
	f("the length must be positive and the start not negative", func(c *Config) {
		c.Spike = schedule.Spike{Factor: 2, At: -time.Second, Length: time.Second}
	})

	ok := func(change func(c *Config)) {
		t.Helper()
		c := DefaultConfig()
		c.Duration = time.Minute
		change(&c)
		assert.NoError(t, c.Validate())
	}
	ok(func(c *Config) { c.Spike = spike })
	ok(func(c *Config) { c.Spike = schedule.Spike{Rate: 30000, At: 50 * time.Second, Length: 10 * time.Second} }) // ends at the end
	ok(func(c *Config) { c.Spike = schedule.Spike{Factor: 3, Length: time.Minute} })                              // the whole run
}

// A 70 s run at 1,000 req/s with 2x:10s@20s plans 1,000·20 + 2,000·10
// + 1,000·40: the run's schedule carries its spike.
func TestConfigScheduleCarriesItsSpike(t *testing.T) {
	c := DefaultConfig()
	c.Rate, c.Duration = 1000, 70*time.Second
	c.Spike = schedule.Spike{Factor: 2, At: 20 * time.Second, Length: 10 * time.Second}
	assert.Equal(t, uint64(80_000), c.schedule().Count(c.Duration), "the run's schedule carries its spike")
}

// AskedRate is the schedule's rate averaged over the run, so that a run
// that kept to it achieves Planned/Duration; the peak is what the loops
// are sized for, and a progress line compares with the average over its
// own stretch.
func TestSpikeRates(t *testing.T) {
	c := DefaultConfig()
	c.Rate, c.Duration = 1000, 70*time.Second
	c.Spike = schedule.Spike{Factor: 2, At: 20 * time.Second, Length: 10 * time.Second}
	assert.Equal(t, 2000.0, c.SpikeRate())
	assert.InDelta(t, float64(c.schedule().Count(c.Duration))/c.Duration.Seconds(), c.AskedRate(), 1e-9)
	assert.InDelta(t, 80_000.0/70, c.AskedRate(), 1e-9)
	assert.Equal(t, 2000.0, c.peakRate())
	assert.Equal(t, 1000.0, c.askedRateOver(19*time.Second, 20*time.Second))
	assert.Equal(t, 2000.0, c.askedRateOver(20*time.Second, 21*time.Second))
	assert.Equal(t, 1500.0, c.askedRateOver(19500*time.Millisecond, 20500*time.Millisecond), "half in the spike")
	assert.Equal(t, 1000.0, c.askedRateOver(30*time.Second, 31*time.Second))
	assert.Equal(t, 1000.0, c.askedRateOver(-time.Second, time.Second), "before the start counts as nothing")

	c.Shard, c.StartAt = schedule.Shard{K: 1, N: 2}, time.Now().Add(time.Minute)
	assert.InDelta(t, 40_000.0/70, c.AskedRate(), 1e-9, "a shard asks its share")
	assert.Equal(t, 1000.0, c.peakRate())

	c.Spike = schedule.Spike{Rate: 500, At: 20 * time.Second, Length: 10 * time.Second}
	assert.Equal(t, 500.0, c.peakRate(), "a dip: the peak is -rate's share")

	c = DefaultConfig()
	assert.Equal(t, c.Rate, c.AskedRate(), "no spike: -rate")
	assert.Equal(t, c.Rate, c.peakRate())
	c.Rate = 0
	assert.Zero(t, c.peakRate())
}

// -loops 0 sizes the loops to the spike's rate, not -rate nor the
// average: 40,000 req/s fits one loop, a 2x spike to 80,000 needs two.
func TestSpikeSizesTheLoopsByItsPeak(t *testing.T) {
	cfg := DefaultConfig()
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
	bothSenders(t, func(t *testing.T, mode func(Config) Config) {
		url := loadgentest.ServeHandler(t, bareserver.Handler)
		cfg := testConfig(url, 2000, 600*time.Millisecond)
		cfg.Spike = schedule.Spike{Factor: 3, At: 200 * time.Millisecond, Length: 200 * time.Millisecond}
		cfg.Conns, cfg.MaxConns, cfg.Loops = 8, 16, 2
		cfg.Interval = 100 * time.Millisecond
		cfg.keepRecords = true
		g, res := runGroup(t, context.Background(), mode(cfg))

		require.Equal(t, uint64(2000), res.Planned, "400 + 1,200 + 400")
		require.Equal(t, int64(res.Planned), res.Sent)
		assert.Zero(t, res.ErrorCount)
		for l, e := range g.engines {
			assert.Equal(t, uint64(1000), e.planned, "loop %d plans every other request", l)
			assert.Equal(t, 6000.0/2, e.rate(), "loop %d is sized to its share of the peak", l)
		}

		whole := cfg.schedule()
		seen := make([]bool, res.Planned)
		perInterval := make([]int, 6)
		for _, rc := range res.records {
			require.Less(t, rc.seq, res.Planned)
			require.False(t, seen[rc.seq], "request %d recorded twice", rc.seq)
			seen[rc.seq] = true
			require.Equal(t, whole.At(rc.seq), rc.intended, "request %d: intended time", rc.seq)
			require.GreaterOrEqual(t, rc.sent, rc.intended, "request %d was sent before it was due", rc.seq)
			perInterval[rc.intended/int64(100*time.Millisecond)]++
		}
		assert.Len(t, res.records, int(res.Sent))
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
