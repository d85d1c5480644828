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
)

func TestParseSpike(t *testing.T) {
	f := func(in string, want Spike) {
		t.Helper()
		got, err := ParseSpike(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	f("2x:10s", Spike{Factor: 2, Length: 10 * time.Second})
	f("2X:10s", Spike{Factor: 2, Length: 10 * time.Second})
	f("1.5x:500ms@1m", Spike{Factor: 1.5, Length: 500 * time.Millisecond, At: time.Minute})
	f("30000:10s", Spike{Rate: 30000, Length: 10 * time.Second})
	f("30000:10s@20s", Spike{Rate: 30000, Length: 10 * time.Second, At: 20 * time.Second})
	f("0.5x:1s@0s", Spike{Factor: 0.5, Length: time.Second}) // a dip is a spike too
	f(" 2x:10s ", Spike{Factor: 2, Length: 10 * time.Second})

	bad := func(in, want string) {
		t.Helper()
		_, err := ParseSpike(in)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
		assert.Contains(t, err.Error(), "want RATE:LENGTH or FACTORx:LENGTH[@START], such as 2x:10s or 30000:10s@20s", in)
	}
	bad("abc", `-spike "abc": want`)
	bad("2x", `-spike "2x": want`)
	bad("x:10s", `-spike "x:10s": want`)
	bad("0x:10s", "the rate or factor must be above 0")
	bad("-3:10s", "the rate or factor must be above 0")
	bad("NaNx:10s", "the rate or factor must be above 0")
	bad("2x:0s", "the length must be positive")
	bad("2x:-1s", "the length must be positive")
	bad("2x:ten", `-spike "2x:ten": want`)
	bad("2x:10s@", `-spike "2x:10s@": want`)
	bad("2x:10s@-1s", "the start must not be negative")
	bad("", `-spike "": want`)

	for _, s := range []string{"2x:10s@20s", "30000:10s@20s", "1.5x:500ms@1m0s"} {
		sp, err := ParseSpike(s)
		require.NoError(t, err)
		assert.Equal(t, s, sp.String(), "String reads back")
	}
	assert.Empty(t, Spike{}.String())
}

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
	spike := Spike{Factor: 2, At: 20 * time.Second, Length: 10 * time.Second}
	f("-spike 2x:10s@20s needs the open model (-rate above 0)", func(c *Config) { c.Rate, c.Spike = 0, spike })
	f("-spike 2x:10s@20s needs -engine fast: vegeta's attacker paces one constant rate", func(c *Config) { c.Engine, c.Spike = EngineVegeta, spike })
	f("-spike 2x:10s@20s starts at 20s and lasts 10s, ending at 30s, past -duration 25s", func(c *Config) { c.Duration, c.Spike = 25*time.Second, spike })
	f("give either a factor or a rate", func(c *Config) { c.Spike = Spike{Factor: 2, Rate: 5, Length: time.Second} })
	f("the length must be positive", func(c *Config) { c.Spike = Spike{Factor: 2} })
	f("the length must be positive and the start not negative", func(c *Config) {
		c.Spike = Spike{Factor: 2, At: -time.Second, Length: time.Second}
	})

	ok := func(change func(c *Config)) {
		t.Helper()
		c := DefaultConfig()
		c.Duration = time.Minute
		change(&c)
		assert.NoError(t, c.Validate())
	}
	ok(func(c *Config) { c.Spike = spike })
	ok(func(c *Config) { c.Spike = Spike{Rate: 30000, At: 50 * time.Second, Length: 10 * time.Second} }) // ends at the end
	ok(func(c *Config) { c.Spike = Spike{Factor: 3, Length: time.Minute} })                              // the whole run
}

// spikeCase is a run's rate with a spike in it, for the schedule tests.
type spikeCase struct {
	rate  float64
	spike Spike
}

var spikeCases = []spikeCase{
	{1000, Spike{Rate: 2000, At: 20 * time.Millisecond, Length: 10 * time.Millisecond}},
	{1000, Spike{Factor: 2, At: 20 * time.Millisecond, Length: 10 * time.Millisecond}},
	{3, Spike{Rate: 7, At: 2 * time.Second, Length: time.Second}},                        // 1/3 s and 1/7 s: intervals that do not divide
	{7919.5, Spike{Factor: 2.5, At: 3_333_333, Length: 1_234_567}},                       // fractional rate, odd boundaries
	{5000, Spike{Factor: 0.3, At: 10 * time.Millisecond, Length: 10 * time.Millisecond}}, // a dip
	{1000, Spike{Factor: 3, At: 0, Length: 10 * time.Millisecond}},                       // from the very start
}

// At and DueBy stay exact inverses across the spike's two boundaries:
// every request is due at its own time and not a nanosecond before, the
// times rise strictly, and DueBy(t) is the smallest n with at(n) > t at
// every t swept across both boundaries, not only at the requests' times.
func TestSpikeScheduleAtAndDueByAreInverses(t *testing.T) {
	for _, c := range spikeCases {
		s := newSpikeSchedule(c.rate, c.spike)
		require.Len(t, s.segs, 3)
		start, end := int64(c.spike.At), int64(c.spike.At+c.spike.Length)
		last := s.dueBy(end+int64(5e9/c.rate)) + 1
		for seq := uint64(0); seq < last; seq++ {
			at := s.at(seq)
			if seq > 0 {
				require.Greater(t, at, s.at(seq-1), "%v: request %d after %d", c, seq, seq-1)
			}
			require.Equal(t, seq+1, s.dueBy(at), "%v: request %d is due at its own time %d", c, seq, at)
			require.Equal(t, seq, s.dueBy(at-1), "%v: and not a nanosecond before", c)
		}
		// The spike's first request is due at its start, and the first
		// after it at its end.
		assert.Equal(t, start, s.at(s.dueBy(start-1)), "%v: the spike starts on time", c)
		assert.Equal(t, end, s.at(s.dueBy(end-1)), "%v: and ends on time", c)

		// A sweep of t over a few intervals either side of each boundary,
		// in steps that fall on no interval's multiple.
		for _, b := range []int64{start, end} {
			span := int64(3e9 / min(c.rate, c.spike.rateOver(c.rate)))
			step := max(span/2000, 1) | 1
			n := s.dueBy(b - span - 1)
			for t0 := b - span; t0 <= b+span; t0 += step {
				for s.at(n) <= t0 {
					n++
				}
				require.Equal(t, n, s.dueBy(t0), "%v: dueBy(%d)", c, t0)
				if n > 0 {
					require.LessOrEqual(t, s.at(n-1), t0, "%v: dueBy(%d) is the smallest", c, t0)
				}
			}
		}
	}
}

// Each segment holds as many requests as a constant-rate run of its
// length at its rate: a 70 s run at 1,000 req/s with 2x:10s@20s plans
// 1,000·20 + 2,000·10 + 1,000·40.
func TestSpikeScheduleCountsEachSegmentAtItsRate(t *testing.T) {
	f := func(rate float64, sp Spike, d time.Duration, want uint64) {
		t.Helper()
		assert.Equal(t, want, newSpikeSchedule(rate, sp).Count(d), "%v req/s with %s over %v", rate, sp, d)
	}
	f(1000, Spike{Factor: 2, At: 20 * time.Second, Length: 10 * time.Second}, 70*time.Second, 1000*20+2000*10+1000*40)
	f(1000, Spike{Rate: 30000, At: 20 * time.Second, Length: 10 * time.Second}, 70*time.Second, 1000*20+30000*10+1000*40)
	f(3, Spike{Factor: 2, At: 20 * time.Second, Length: 10 * time.Second}, 70*time.Second, 3*20+6*10+3*40)
	f(3, Spike{Rate: 7, At: 2 * time.Second, Length: time.Second}, 4*time.Second, 3*2+7+3) // ⌈2·3⌉ + ⌈7⌉ + ⌈3⌉
	f(1000, Spike{Factor: 3, Length: time.Second}, 2*time.Second, 3000+1000)
	f(1000, Spike{Factor: 3, At: time.Second, Length: time.Second}, 2*time.Second, 1000+3000)
	assert.Equal(t, newSchedule(1000).Count(time.Second), newSpikeSchedule(1000, Spike{}).Count(time.Second), "no spike: the constant schedule")

	c := DefaultConfig()
	c.Rate, c.Duration = 1000, 70*time.Second
	c.Spike = Spike{Factor: 2, At: 20 * time.Second, Length: 10 * time.Second}
	assert.Equal(t, uint64(80_000), c.schedule().Count(c.Duration), "the run's schedule carries its spike")
}

// Loops and shards each take every L-th request of the whole run's
// schedule, spike and all: 3 loops × 2 shards hold every request once,
// each at the whole schedule's time, each share's times rising, and
// their counts add up to the whole run's.
func TestSpikeScheduleSplitsIntoShares(t *testing.T) {
	const shards, loops = 2, 3
	for _, c := range spikeCases {
		whole := newSpikeSchedule(c.rate, c.spike)
		d := c.spike.At + c.spike.Length + c.spike.Length/2
		total := whole.Count(d)
		require.Positive(t, total)
		owner := make([]int, total)
		var counted uint64
		for k := 1; k <= shards; k++ {
			for l := range loops {
				p := Shard{K: k, N: shards}.share().split(l, loops)
				s := whole.of(p)
				var held uint64
				for j := uint64(0); s.Seq(j) < total; j++ {
					seq := s.Seq(j)
					require.Zero(t, owner[seq], "%v: request %d is in two shares", c, seq)
					owner[seq] = 1 + (k-1)*loops + l
					require.Equal(t, whole.at(seq), s.At(j), "%v: share %v keeps the run's time", c, p)
					if j > 0 {
						require.Greater(t, s.At(j), s.At(j-1), "%v: share %v's times rise", c, p)
					}
					require.Equal(t, j+1, s.DueBy(s.At(j)), "%v: share %v request %d is due at its time", c, p, j)
					require.Equal(t, j, s.DueBy(s.At(j)-1), "%v: share %v and not before", c, p)
					held++
				}
				assert.Equal(t, held, s.Count(d), "%v: share %v", c, p)
				counted += held
			}
		}
		assert.Equal(t, total, counted, "%v", c)
		for seq, o := range owner {
			require.NotZero(t, o, "%v: request %d is in no share", c, seq)
		}
	}
}

// AskedRate is the schedule's rate averaged over the run, so that a run
// that kept to it achieves Planned/Duration; the peak is what the loops
// are sized for, and a progress line compares with the average over its
// own stretch.
func TestSpikeRates(t *testing.T) {
	c := DefaultConfig()
	c.Rate, c.Duration = 1000, 70*time.Second
	c.Spike = Spike{Factor: 2, At: 20 * time.Second, Length: 10 * time.Second}
	assert.Equal(t, 2000.0, c.SpikeRate())
	assert.InDelta(t, float64(c.schedule().Count(c.Duration))/c.Duration.Seconds(), c.AskedRate(), 1e-9)
	assert.InDelta(t, 80_000.0/70, c.AskedRate(), 1e-9)
	assert.Equal(t, 2000.0, c.peakRate())
	assert.Equal(t, 1000.0, c.askedRateOver(19*time.Second, 20*time.Second))
	assert.Equal(t, 2000.0, c.askedRateOver(20*time.Second, 21*time.Second))
	assert.Equal(t, 1500.0, c.askedRateOver(19500*time.Millisecond, 20500*time.Millisecond), "half in the spike")
	assert.Equal(t, 1000.0, c.askedRateOver(30*time.Second, 31*time.Second))
	assert.Equal(t, 1000.0, c.askedRateOver(-time.Second, time.Second), "before the start counts as nothing")

	c.Shard, c.StartAt = Shard{K: 1, N: 2}, time.Now().Add(time.Minute)
	assert.InDelta(t, 40_000.0/70, c.AskedRate(), 1e-9, "a shard asks its share")
	assert.Equal(t, 1000.0, c.peakRate())

	c.Spike = Spike{Rate: 500, At: 20 * time.Second, Length: 10 * time.Second}
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
	cfg.Spike = Spike{Factor: 2, At: 20 * time.Second, Length: 10 * time.Second}
	require.NoError(t, cfg.Validate())
	p, release := place(&cfg)
	release()
	assert.Equal(t, min(2, placeCPUs()), p.loops)
	assert.Contains(t, p.loopsWhy, "80,000 req/s needs 2")

	cfg.Spike = Spike{}
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
		cfg.Spike = Spike{Factor: 3, At: 200 * time.Millisecond, Length: 200 * time.Millisecond}
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
			require.Equal(t, whole.at(rc.seq), rc.intended, "request %d: intended time", rc.seq)
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
