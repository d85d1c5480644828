package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/loadgen/schedule"
)

func TestConfigRefusesNonLoopbackTargets(t *testing.T) {
	cfg := Default()
	cfg.Target = "http://192.0.2.1:19234"
	err := cfg.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a loopback address")
	cfg.AllowRemote = true
	assert.NoError(t, cfg.Validate(), "-allow-remote lifts the guard")

	f := func(target string) {
		t.Helper()
		c := Default()
		c.Target = target
		assert.NoError(t, c.Validate(), target)
	}
	f("http://127.0.0.1:19234")
	f("http://localhost:19234/prefix/")
	f("http://[::1]:19234")
}

// Loader settings that cannot work are refused before anything starts,
// naming the flag.
func TestConfigRefusesBadLoaderSettings(t *testing.T) {
	f := func(want string, change func(c *Config)) {
		t.Helper()
		c := Default()
		change(&c)
		err := c.Validate()
		require.Error(t, err, want)
		assert.Contains(t, err.Error(), want)
	}
	f("-loops -1 is negative", func(c *Config) { c.Loops = -1 })
	f("-loops 65 is above -conns 64", func(c *Config) { c.Loops = 65 })
	f("-loops 2 needs -engine fast", func(c *Config) { c.Engine, c.Loops = EngineVegeta, 2 })
	f("-cpus 1023: CPU 1023 is not on this machine", func(c *Config) { c.CPUs = cpuset.Of(1023) })
	f("-shard 3/2: K must be in 1..2", func(c *Config) { c.Shard = schedule.Shard{K: 3, N: 2}; c.StartAt = time.Now().Add(time.Minute) })
	f("-shard 2/4 needs -start-at", func(c *Config) { c.Shard = schedule.Shard{K: 2, N: 4} })
	f("-start-at on a closed loop (-rate 0) needs -shard", func(c *Config) { c.Rate, c.StartAt = 0, time.Now().Add(time.Minute) })
	f("in the past", func(c *Config) { c.StartAt = time.Now().Add(-2 * time.Second) })
	f("-shard and -start-at need -engine fast", func(c *Config) {
		c.Engine, c.Shard, c.StartAt = EngineVegeta, schedule.Shard{K: 1, N: 2}, time.Now().Add(time.Minute)
	})

	ok := func(change func(c *Config)) {
		t.Helper()
		c := Default()
		change(&c)
		assert.NoError(t, c.Validate())
	}
	ok(func(c *Config) { c.Loops = 64 })
	ok(func(c *Config) { c.Engine, c.Loops = EngineVegeta, 1 })
	ok(func(c *Config) { c.Shard = schedule.Shard{K: 1, N: 1} })
	ok(func(c *Config) { c.StartAt = time.Now().Add(time.Minute) })
	ok(func(c *Config) { c.StartAt = time.Now().Add(-500 * time.Millisecond) })
	ok(func(c *Config) {
		c.Rate, c.Shard, c.StartAt = 0, schedule.Shard{K: 2, N: 3}, time.Now().Add(time.Minute)
	})
}

func TestConfigQuantumBounds(t *testing.T) {
	c := Default()
	assert.Zero(t, c.Quantum, "sized by the run unless set")
	require.NoError(t, c.Validate())
	c.Quantum = schedule.MaxQuantum
	require.NoError(t, c.Validate())
	c.Quantum = schedule.MaxQuantum + 1
	assert.ErrorContains(t, c.Validate(), "-quantum 1.000001ms is outside [0, 1ms]")
	c.Quantum = -1
	assert.ErrorContains(t, c.Validate(), "is outside [0, 1ms]")
}

func TestConfigRefusesBadSpikes(t *testing.T) {
	f := func(want string, change func(c *Config)) {
		t.Helper()
		c := Default()
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
		c := Default()
		c.Duration = time.Minute
		change(&c)
		assert.NoError(t, c.Validate())
	}
	ok(func(c *Config) { c.Spike = spike })
	ok(func(c *Config) {
		c.Spike = schedule.Spike{Rate: 30000, At: 50 * time.Second, Length: 10 * time.Second}
	}) // ends at the end
	ok(func(c *Config) { c.Spike = schedule.Spike{Factor: 3, Length: time.Minute} }) // the whole run
}

// A 70 s run at 1,000 req/s with 2x:10s@20s plans 1,000·20 + 2,000·10
// + 1,000·40: the run's schedule carries its spike.
func TestConfigScheduleCarriesItsSpike(t *testing.T) {
	c := Default()
	c.Rate, c.Duration = 1000, 70*time.Second
	c.Spike = schedule.Spike{Factor: 2, At: 20 * time.Second, Length: 10 * time.Second}
	assert.Equal(t, uint64(80_000), c.Schedule().Count(c.Duration), "the run's schedule carries its spike")
}

// AskedRate is the schedule's rate averaged over the run, so that a run
// that kept to it achieves Planned/Duration; the peak is what the loops
// are sized for, and a progress line compares with the average over its
// own stretch.
func TestSpikeRates(t *testing.T) {
	c := Default()
	c.Rate, c.Duration = 1000, 70*time.Second
	c.Spike = schedule.Spike{Factor: 2, At: 20 * time.Second, Length: 10 * time.Second}
	assert.Equal(t, 2000.0, c.SpikeRate())
	assert.InDelta(t, float64(c.Schedule().Count(c.Duration))/c.Duration.Seconds(), c.AskedRate(), 1e-9)
	assert.InDelta(t, 80_000.0/70, c.AskedRate(), 1e-9)
	assert.Equal(t, 2000.0, c.PeakRate())
	assert.Equal(t, 1000.0, c.AskedRateOver(19*time.Second, 20*time.Second))
	assert.Equal(t, 2000.0, c.AskedRateOver(20*time.Second, 21*time.Second))
	assert.Equal(t, 1500.0, c.AskedRateOver(19500*time.Millisecond, 20500*time.Millisecond), "half in the spike")
	assert.Equal(t, 1000.0, c.AskedRateOver(30*time.Second, 31*time.Second))
	assert.Equal(t, 1000.0, c.AskedRateOver(-time.Second, time.Second), "before the start counts as nothing")

	c.Shard, c.StartAt = schedule.Shard{K: 1, N: 2}, time.Now().Add(time.Minute)
	assert.InDelta(t, 40_000.0/70, c.AskedRate(), 1e-9, "a shard asks its share")
	assert.Equal(t, 1000.0, c.PeakRate())

	c.Spike = schedule.Spike{Rate: 500, At: 20 * time.Second, Length: 10 * time.Second}
	assert.Equal(t, 500.0, c.PeakRate(), "a dip: the peak is -rate's share")

	c = Default()
	assert.Equal(t, c.Rate, c.AskedRate(), "no spike: -rate")
	assert.Equal(t, c.Rate, c.PeakRate())
	c.Rate = 0
	assert.Zero(t, c.PeakRate())
}
