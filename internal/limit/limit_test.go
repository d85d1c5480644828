package limit

import (
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewRefusesOutOfRange(t *testing.T) {
	f := func(cfg Config, want string) {
		t.Helper()
		cfg.CPUs = 4 // defaults the same on every machine
		l, err := New(cfg)
		require.EqualError(t, err, want, "%+v", cfg)
		assert.Nil(t, l)
	}
	f(Config{Algorithm: "foo"}, `-limit "foo": want one of fixed, gradient2, vegas, aimd`)
	f(Config{Algorithm: "Vegas"}, `-limit "Vegas": want one of fixed, gradient2, vegas, aimd`)
	f(Config{Min: 50, Max: 20, Initial: 20}, `-limit-min 50 is above -limit-max 20`)
	f(Config{Min: 50, Max: 20}, `-limit-min 50 is above -limit-max 20`)
	f(Config{Min: -1}, `-limit-min -1 is below 1`)
	f(Config{Max: -3}, `-limit-max -3 is below 1`)
	f(Config{Initial: -2}, `-limit-initial -2 is below 1`)
	f(Config{Min: 10, Max: 20, Initial: 5}, `-limit-initial 5 is outside [-limit-min 10, -limit-max 20]`)
	f(Config{Min: 10, Max: 20, Initial: 21}, `-limit-initial 21 is outside [-limit-min 10, -limit-max 20]`)
	f(Config{Min: 10, Initial: 5}, `-limit-initial 5 is outside [-limit-min 10, -limit-max 1000]`)
	f(Config{Algorithm: "gradient2", Smoothing: -0.1}, `-limit-smoothing -0.1 is outside (0, 1]`)
	f(Config{Algorithm: "gradient2", Smoothing: 1.5}, `-limit-smoothing 1.5 is outside (0, 1]`)
	f(Config{Algorithm: "vegas", Smoothing: math.NaN()}, `-limit-smoothing NaN is outside (0, 1]`)
	f(Config{Algorithm: "aimd", Backoff: 0.4}, `-limit-backoff 0.4 is outside [0.5, 1)`)
	f(Config{Algorithm: "aimd", Backoff: 1}, `-limit-backoff 1 is outside [0.5, 1)`)
	f(Config{Algorithm: "aimd", Backoff: -0.9}, `-limit-backoff -0.9 is outside [0.5, 1)`)
	// Checked whatever the algorithm: the flag's value is wrong anyway.
	f(Config{Algorithm: "fixed", Backoff: 2}, `-limit-backoff 2 is outside [0.5, 1)`)
	f(Config{Algorithm: "gradient2", Tolerance: 0.9}, `limit.Config.Tolerance 0.9 is below 1`)
	f(Config{LongWindow: -1}, `limit.Config.LongWindow -1 is below 1`)
	f(Config{WindowSamples: -1}, `limit.Config.WindowSamples -1 is below 1`)
	f(Config{Timeout: -time.Second}, `limit.Config.Timeout -1s is not positive`)
	f(Config{Window: -time.Millisecond}, `limit.Config.Window -1ms is not positive`)
	f(Config{QueueSize: -4}, `limit.Config.QueueSize -4 is below 0`)
}

func TestNewAccepts(t *testing.T) {
	f := func(cfg Config, current int) {
		t.Helper()
		cfg.CPUs = 4
		l, err := New(cfg)
		require.NoError(t, err, "%+v", cfg)
		assert.Equal(t, current, l.Current())
		want := cfg.Algorithm
		if want == "" {
			want = "fixed"
		}
		assert.Equal(t, want, l.Name())
	}
	f(Config{}, 16)
	for _, a := range Algorithms {
		f(Config{Algorithm: a}, 16)
		f(Config{Algorithm: a, Min: 1, Max: 1, Initial: 1}, 1)
		f(Config{Algorithm: a, Min: 5, Max: 7, Initial: 7, Smoothing: 1, Backoff: 0.5, Tolerance: 1}, 7)
	}
}

func TestWithDefaults(t *testing.T) {
	f := func(in Config, min, initial, max int) {
		t.Helper()
		c := in.WithDefaults()
		assert.Equal(t, []int{min, initial, max}, []int{c.Min, c.Initial, c.Max}, "Min, Initial, Max of %+v", in)
		require.NoError(t, c.Validate(), "defaults never make a valid setting invalid")
	}
	f(Config{CPUs: 1}, 1, 4, 1000)
	f(Config{CPUs: 8}, 8, 32, 1000)
	f(Config{CPUs: 64}, 64, 256, 1000)
	f(Config{CPUs: 400}, 400, 1000, 1000)
	f(Config{CPUs: 2000}, 2000, 2000, 2000)
	// The defaults bend to explicit bounds.
	f(Config{CPUs: 8, Max: 4}, 4, 4, 4)
	f(Config{CPUs: 8, Initial: 2}, 2, 2, 1000) // -workers 2 under "fixed"
	f(Config{CPUs: 8, Initial: 5000}, 8, 5000, 5000)
	f(Config{CPUs: 8, Min: 1}, 1, 32, 1000)
	f(Config{CPUs: 8, Min: 100}, 100, 100, 1000)

	c := Config{}.WithDefaults()
	assert.Equal(t, runtime.GOMAXPROCS(0), c.CPUs)
	assert.Equal(t, "fixed", c.Algorithm)
	assert.Equal(t, DefaultWindow, c.Window)
	assert.Equal(t, DefaultWindowSamples, c.WindowSamples)
	assert.Equal(t, DefaultLongWindow, c.LongWindow)
	assert.Equal(t, DefaultTolerance, c.Tolerance)
	assert.Equal(t, DefaultBackoff, c.Backoff)
	assert.Equal(t, DefaultTimeout, c.Timeout)
	assert.Equal(t, DefaultGradient2Smoothing, c.Smoothing)
	assert.Equal(t, DefaultVegasSmoothing, Config{Algorithm: "vegas"}.WithDefaults().Smoothing)
	assert.NotNil(t, c.Now)
}

func TestFixedNeverChanges(t *testing.T) {
	l, err := New(Config{Algorithm: "fixed", Initial: 12, Now: func() int64 { return 0 }})
	require.NoError(t, err)
	for i := range 10000 {
		// Everything that moves an adaptive limit, both ways.
		l.Sample(int64(i)*int64(time.Millisecond), time.Duration(1+i%7)*time.Second, 1+i%50, i%3 == 0)
		require.Equal(t, 12, l.Current())
	}
	assert.Zero(t, l.Changes())
	assert.Equal(t, "fixed", l.Name())
}
