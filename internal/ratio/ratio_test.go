package ratio

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOfAgainstBenchstat: ten ratios whose interval benchstat prints as
// "0.9750 ± 5%" (benchstat v0.0.0-20260908200009-22c9c6c9d4da on a file of
// `BenchmarkRatio 1 <r> ns/op` lines, one per ratio below): the median and
// the order statistics 2 and 9 of 10 at 95 %, whose larger distance from
// the median, 4.6 %, benchstat rounds to 5 %.
func TestOfAgainstBenchstat(t *testing.T) {
	iv := Of([]float64{0.91, 0.95, 0.97, 0.98, 1.02, 1.04, 0.93, 0.99, 0.96, 1.00})
	assert.InDelta(t, 0.975, iv.Median, 1e-12)
	assert.InDelta(t, 0.93, iv.Lo, 1e-12)
	assert.InDelta(t, 1.02, iv.Hi, 1e-12)
	assert.Equal(t, 10, iv.N)
	assert.Equal(t, 5.0, math.Round(100*iv.HalfWidth()), "benchstat's ± 5%")
	assert.False(t, iv.Differs(), "0.93–1.02 includes 1")
	assert.Equal(t, "~ 0.97× (0.93–1.02)", iv.String())
}

func TestPaired(t *testing.T) {
	// Direct drifts from 100 to 70 over the rounds; the pool stays at 0.8
	// of direct in each pair: the pairs see 0.8 exactly, the drift cancels.
	direct := []float64{100, 95, 90, 85, 80, 75, 70}
	pool := []float64{80, 76, 72, 68, 64, 60, 56}
	iv, err := Paired(direct, pool)
	require.NoError(t, err)
	assert.InDelta(t, 0.8, iv.Median, 1e-12)
	assert.InDelta(t, 0.8, iv.Lo, 1e-12)
	assert.InDelta(t, 0.8, iv.Hi, 1e-12)
	assert.True(t, iv.Differs())
	assert.Equal(t, "0.80× (0.80–0.80)", iv.String())

	_, err = Paired([]float64{1}, []float64{1, 2})
	assert.Error(t, err)

	// An unknown measurement (0) drops its pair.
	iv, err = Paired([]float64{1, 0, 2}, []float64{2, 5, 4})
	require.NoError(t, err)
	assert.Equal(t, 2, iv.N)
}

func TestTooFewPairs(t *testing.T) {
	for n := 1; n < MinPairs; n++ {
		rs := make([]float64, n)
		for i := range rs {
			rs[i] = 0.5 // far from 1, but too few to say so
		}
		iv := Of(rs)
		assert.False(t, iv.Finite(), "n=%d", n)
		assert.False(t, iv.Differs(), "n=%d", n)
	}
	iv := Of([]float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5})
	assert.True(t, iv.Finite(), "six pairs give a finite interval")
	assert.True(t, iv.Differs())
	assert.Equal(t, "0.50× (n=3: too few pairs for an interval)", Of([]float64{0.4, 0.5, 0.6}).String())
	assert.Equal(t, "-", Of(nil).String())
}

func TestMedian(t *testing.T) {
	xs := []float64{3, 1, 2, 10}
	assert.Equal(t, 2.5, Median(xs), "the mean of the middle two")
	assert.Equal(t, []float64{3, 1, 2, 10}, xs, "left as it is")
	assert.Equal(t, 2.0, Median(xs[:3]))
	assert.Zero(t, Median(nil))
}
