package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
		s := WithSpike(c.rate, c.spike)
		require.Len(t, s.segs, 3)
		start, end := int64(c.spike.At), int64(c.spike.At+c.spike.Length)
		last := s.DueBy(end+int64(5e9/c.rate)) + 1
		for seq := uint64(0); seq < last; seq++ {
			at := s.At(seq)
			if seq > 0 {
				require.Greater(t, at, s.At(seq-1), "%v: request %d after %d", c, seq, seq-1)
			}
			require.Equal(t, seq+1, s.DueBy(at), "%v: request %d is due at its own time %d", c, seq, at)
			require.Equal(t, seq, s.DueBy(at-1), "%v: and not a nanosecond before", c)
		}
		// The spike's first request is due at its start, and the first
		// after it at its end.
		assert.Equal(t, start, s.At(s.DueBy(start-1)), "%v: the spike starts on time", c)
		assert.Equal(t, end, s.At(s.DueBy(end-1)), "%v: and ends on time", c)

		// A sweep of t over a few intervals either side of each boundary,
		// in steps that fall on no interval's multiple.
		for _, b := range []int64{start, end} {
			span := int64(3e9 / min(c.rate, c.spike.RateOver(c.rate)))
			step := max(span/2000, 1) | 1
			n := s.DueBy(b - span - 1)
			for t0 := b - span; t0 <= b+span; t0 += step {
				for s.At(n) <= t0 {
					n++
				}
				require.Equal(t, n, s.DueBy(t0), "%v: dueBy(%d)", c, t0)
				if n > 0 {
					require.LessOrEqual(t, s.At(n-1), t0, "%v: dueBy(%d) is the smallest", c, t0)
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
		assert.Equal(t, want, WithSpike(rate, sp).Count(d), "%v req/s with %s over %v", rate, sp, d)
	}
	f(1000, Spike{Factor: 2, At: 20 * time.Second, Length: 10 * time.Second}, 70*time.Second, 1000*20+2000*10+1000*40)
	f(1000, Spike{Rate: 30000, At: 20 * time.Second, Length: 10 * time.Second}, 70*time.Second, 1000*20+30000*10+1000*40)
	f(3, Spike{Factor: 2, At: 20 * time.Second, Length: 10 * time.Second}, 70*time.Second, 3*20+6*10+3*40)
	f(3, Spike{Rate: 7, At: 2 * time.Second, Length: time.Second}, 4*time.Second, 3*2+7+3) // ⌈2·3⌉ + ⌈7⌉ + ⌈3⌉
	f(1000, Spike{Factor: 3, Length: time.Second}, 2*time.Second, 3000+1000)
	f(1000, Spike{Factor: 3, At: time.Second, Length: time.Second}, 2*time.Second, 1000+3000)
	assert.Equal(t, New(1000).Count(time.Second), WithSpike(1000, Spike{}).Count(time.Second), "no spike: the constant schedule")

}

// Loops and shards each take every L-th request of the whole run's
// schedule, spike and all: 3 loops × 2 shards hold every request once,
// each at the whole schedule's time, each share's times rising, and
// their counts add up to the whole run's.
func TestSpikeScheduleSplitsIntoShares(t *testing.T) {
	const shards, loops = 2, 3
	for _, c := range spikeCases {
		whole := WithSpike(c.rate, c.spike)
		d := c.spike.At + c.spike.Length + c.spike.Length/2
		total := whole.Count(d)
		require.Positive(t, total)
		owner := make([]int, total)
		var counted uint64
		for k := 1; k <= shards; k++ {
			for l := range loops {
				p := Shard{K: k, N: shards}.Share().Split(l, loops)
				s := whole.Of(p)
				var held uint64
				for j := uint64(0); s.Seq(j) < total; j++ {
					seq := s.Seq(j)
					require.Zero(t, owner[seq], "%v: request %d is in two shares", c, seq)
					owner[seq] = 1 + (k-1)*loops + l
					require.Equal(t, whole.At(seq), s.At(j), "%v: share %v keeps the run's time", c, p)
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
