package plan

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPresetPlans(t *testing.T) {
	f := func(preset string, wantVariants int, wantFirst []string) {
		t.Helper()
		o := DefaultOptions()
		o.Preset = preset
		require.NoError(t, o.Validate())
		p, err := New(&o, 8)
		require.NoError(t, err)
		require.Len(t, p.Variants, wantVariants, "%s: variants", preset)
		assert.True(t, p.Variants[0].IsBaseline(), "%s: direct must come first, it sets the rates", preset)
		for i, name := range wantFirst {
			assert.Equal(t, name, p.Variants[i].Name(), "%s: variant %d", preset, i)
		}
		seen := map[string]bool{}
		for _, v := range p.Variants {
			assert.False(t, seen[v.Slug()], "%s: two variants share the folder %s", preset, v.Slug())
			seen[v.Slug()] = true
		}
	}
	// The pools, kvserver's default and the peer beside them.
	f("queues", 8, []string{"direct", "fifo", "lifo", "msqueue", "multiqueue", "adaptive", "auto", "failsafe"})
	f("capacity", 13, []string{"direct", "fifo cap=32", "fifo cap=64"})
	// direct, the 5 queued pools at kvserver's defaults, 5 × 4 policies
	// at the seeds' bound, fifo and lifo × 3 adaptive limits.
	f("policies", 32, []string{"direct", "fifo", "lifo", "msqueue", "multiqueue", "adaptive", "fifo/reject cap=1024", "fifo/drop-oldest cap=1024"})
	f("slow-backend", 22, []string{"direct", "fifo workers=2", "fifo workers=8", "fifo workers=64"})
	// overload.sh's matrix (5 queued pools × 4 policies, direct, msqueue
	// unbounded) with the defaults and the limits beside it.
	f("overload", 33, []string{"direct", "fifo", "lifo", "msqueue", "multiqueue", "adaptive", "fifo/reject cap=1024"})
	// 1, 2, 4, 8 CPUs (the test's server set) × 6 pools.
	f("scaling", 24, []string{"direct cpus=1", "fifo cpus=1", "lifo cpus=1"})
}

// TestQueueTimeoutSweep: -queue-timeouts adds each queueing pool at its
// defaults but for -queue-timeout, named for it and not judged as a
// default configuration; -policies none drops the seeds' grid.
func TestQueueTimeoutSweep(t *testing.T) {
	o := DefaultOptions()
	o.Preset, o.Pools, o.Policies, o.Limits = "policies", []string{"fifo", "lifo"}, []string{}, []string{}
	o.QueueTimeouts = []time.Duration{10 * time.Millisecond, 0}
	require.NoError(t, o.Validate())
	p, err := New(&o, 8)
	require.NoError(t, err)
	var names []string
	for _, v := range p.Variants {
		names = append(names, v.Name())
	}
	assert.Equal(t, []string{"direct", "fifo", "lifo", "fifo queue-timeout=10ms", "fifo queue-timeout=0s", "lifo queue-timeout=10ms", "lifo queue-timeout=0s"}, names)
	v := p.Variants[3]
	assert.Equal(t, []string{"-pool", "fifo", "-queue-timeout", "10ms"}, v.Args())
	assert.False(t, v.AtDefaults())
	assert.True(t, p.Variants[1].AtDefaults())
}

// TestPresetVariantsOfTheDefaultsAndLimits: the policy variants name
// their bound (a queue at kvserver's default -cap never fills) and turn
// shedding by age off, as the seeds ran; the defaults pass no pool flag at all; the limit
// variants run on fifo and lifo; -execs multiplies the queueing variants
// but not direct or the limits.
func TestPresetVariantsOfTheDefaultsAndLimits(t *testing.T) {
	find := func(vs []Variant, name string) Variant {
		t.Helper()
		for _, v := range vs {
			if v.Name() == name {
				return v
			}
		}
		t.Fatalf("no variant %q", name)
		return Variant{}
	}
	for _, preset := range []string{"policies", "overload"} {
		o := DefaultOptions()
		o.Preset = preset
		p, err := New(&o, 8)
		require.NoError(t, err)
		assert.Equal(t, []string{"-pool", "lifo"}, find(p.Variants, "lifo").Args(), "%s: kvserver's defaults, no flag", preset)
		assert.True(t, find(p.Variants, "lifo").AtDefaults())
		v := find(p.Variants, "lifo/reject cap=1024")
		assert.Equal(t, []string{"-pool", "lifo", "-overflow", "reject", "-cap", "1024", "-queue-timeout", "0s"}, v.Args(), preset)
		assert.False(t, v.AtDefaults())
		assert.Equal(t, []string{"-pool", "fifo", "-limit", "vegas"}, find(p.Variants, "fifo limit=vegas").Args())
		for _, v := range p.Variants {
			assert.False(t, v.Limit != "" && v.Pool != "fifo" && v.Pool != "lifo", "%s: a limit variant on %s", preset, v.Pool)
		}
	}
	o := DefaultOptions()
	o.Preset = "overload"
	p, err := New(&o, 8)
	require.NoError(t, err)
	assert.Equal(t, []string{"-pool", "msqueue", "-cap", "-1"}, find(p.Variants, "msqueue unbounded").Args(), "unbounded msqueue as before")

	o = DefaultOptions()
	o.Preset, o.Execs, o.Limits, o.Pools = "queues", []string{"handler", "worker"}, nil, []string{"lifo"}
	p, err = New(&o, 8)
	require.NoError(t, err)
	var names []string
	for _, v := range p.Variants {
		names = append(names, v.Name())
	}
	assert.Equal(t, []string{"direct", "lifo exec=handler", "lifo exec=worker"}, names)
	assert.Equal(t, []string{"-pool", "lifo", "-exec", "worker"}, p.Variants[2].Args())

	o = DefaultOptions()
	o.Preset, o.Execs, o.Limits, o.Pools, o.Policies = "policies", []string{"worker"}, []string{"aimd"}, []string{"lifo"}, []string{"block"}
	p, err = New(&o, 8)
	require.NoError(t, err)
	names = nil
	for _, v := range p.Variants {
		names = append(names, v.Name())
	}
	assert.Equal(t, []string{"direct", "lifo exec=worker", "lifo/block cap=1024 exec=worker", "lifo limit=aimd"}, names,
		"a limit adapts -exec handler's slots only: not multiplied by -execs")

	o = DefaultOptions()
	o.Preset, o.Limits = "policies", []string{}
	p, err = New(&o, 8)
	require.NoError(t, err)
	assert.Len(t, p.Variants, 26, "-limits none")

	o = DefaultOptions()
	o.Preset, o.Pools, o.Workers = "slow-backend", []string{"lifo"}, []int{2}
	p, err = New(&o, 8)
	require.NoError(t, err)
	v := find(p.Variants, "lifo limit=gradient2")
	assert.Equal(t, time.Millisecond, v.IODelay, "a limit variant behind the slow store too")
	assert.Equal(t, 2, find(p.Variants, "lifo workers=2").Workers)
}

func TestPresetDetails(t *testing.T) {
	o := DefaultOptions()
	o.Preset = "overload"
	require.NoError(t, o.Validate())
	p, err := New(&o, 8)
	require.NoError(t, err)
	assert.Equal(t, 10.0, p.OverloadFactor, "the overload preset asks for 10x, as make overload did")

	o = DefaultOptions()
	o.Preset, o.Quick = "queues", true
	o.ApplyDefaults(false, false)
	require.NoError(t, o.Validate())
	p, err = New(&o, 8)
	require.NoError(t, err)
	assert.Equal(t, []string{"get"}, p.Workloads, "quick runs one workload")
	assert.False(t, p.SaturateAll, "quick searches direct's saturation only: the pools' ratios come from the pairs")
	assert.True(t, p.Paired)
	assert.Equal(t, uint64(QuickKeys), o.Keys)
	assert.Equal(t, 1, o.Repeat)
	assert.Equal(t, 2.0, p.OverloadFactor)

	// In full, the pools are searched only where their repeats bound an
	// interval: at the default 3, direct alone; at MinPairs, every pool.
	for repeat, all := range map[int]bool{3: false, MinPairs - 1: false, MinPairs: true} {
		o = DefaultOptions()
		o.Repeat = repeat
		require.NoError(t, o.Validate())
		p, err = New(&o, 8)
		require.NoError(t, err)
		assert.Equal(t, all, p.SaturateAll, "-repeat %d", repeat)
		assert.True(t, p.Paired, "-repeat %d", repeat)
	}

	o = DefaultOptions()
	o.Preset = "overload"
	o.ApplyDefaults(false, false)
	assert.Equal(t, uint64(QuickKeys), o.Keys, "the overload preset's store, as overload.sh's")
	assert.Equal(t, 1, o.Repeat, "one search sets the overload rate")
	assert.Equal(t, OverloadPresetDuration, o.StepTiming().Overload)
	o = DefaultOptions()
	o.Preset, o.Keys, o.Repeat = "overload", 5000, 3
	o.ApplyDefaults(true, true)
	assert.Equal(t, uint64(5000), o.Keys, "a -keys given wins")
	assert.Equal(t, 3, o.Repeat, "a -repeat given wins")

	o = DefaultOptions()
	o.Preset, o.Pools, o.Limits = "slow-backend", []string{"lifo"}, []string{}
	o.IODelay, o.IODelayDist, o.Workers = 2*time.Millisecond, "exp", []int{4}
	require.NoError(t, o.Validate())
	p, err = New(&o, 8)
	require.NoError(t, err)
	require.Len(t, p.Variants, 2)
	assert.Equal(t, []string{"-pool", "direct", "-io-delay", "2ms", "-io-delay-dist", "exp"}, p.Variants[0].Args(),
		"direct gets the slow store too, or the ratios compare different backends")
	assert.Equal(t, []string{"-pool", "lifo", "-workers", "4", "-io-delay", "2ms", "-io-delay-dist", "exp"}, p.Variants[1].Args())
}

func TestValidateRefusesUnknownNames(t *testing.T) {
	f := func(mutate func(*Options), wantFlag string, wantListed []string) {
		t.Helper()
		o := DefaultOptions()
		mutate(&o)
		err := o.Validate()
		require.Error(t, err)
		assert.Contains(t, err.Error(), wantFlag)
		for _, name := range wantListed {
			assert.Contains(t, err.Error(), name, "the error lists the valid names")
		}
	}
	f(func(o *Options) { o.Preset = "queue" }, "-preset", Presets)
	f(func(o *Options) { o.Pools = []string{"fifo", "stack"} }, "-pools", Pools)
	f(func(o *Options) { o.Policies = []string{"discard"} }, "-policies", Policies)
	f(func(o *Options) { o.Repeat = 0 }, "-repeat", nil)
	f(func(o *Options) { o.MaxConns = 10 }, "-max-conns", nil)
	f(func(o *Options) { o.Factor = 0.5 }, "-factor", nil)
	f(func(o *Options) { o.Preset, o.Caps = "capacity", nil }, "-cap", nil)
	f(func(o *Options) { o.IODelayDist = "normal" }, "-io-delay-dist", []string{"fixed", "exp"})
	f(func(o *Options) { o.Execs = []string{"goroutine"} }, "-execs", Execs)
	f(func(o *Options) { o.Limits = []string{"fixed"} }, "-limits", Limits)
}

func TestVariantNamesAndArgs(t *testing.T) {
	v := Variant{Pool: "fifo", Policy: "drop-oldest", Cap: 64, CapSet: true, Workers: 8}
	assert.Equal(t, "fifo/drop-oldest cap=64 workers=8", v.Name())
	assert.Equal(t, "fifo-drop-oldest-cap64-workers8", v.Slug())
	assert.Equal(t, []string{"-pool", "fifo", "-overflow", "drop-oldest", "-cap", "64", "-workers", "8"}, v.Args())
	assert.Equal(t, "drop-oldest", v.PolicyLabel())
	assert.Equal(t, "fifo cap=64 workers=8", v.PoolLabel())
	assert.Equal(t, "-", Variant{Pool: "direct"}.PolicyLabel())
	assert.Equal(t, "default", Variant{Pool: "lifo"}.PolicyLabel())
	assert.Equal(t, "fifo cap=0", Variant{Pool: "fifo", CapSet: true}.Name(), "cap 0 (hand-off) is a capacity, not the default")
}

func TestScalingCounts(t *testing.T) {
	f := func(n int, want ...int) {
		t.Helper()
		assert.Equal(t, want, ScalingCounts(n), "a server set of %d CPUs", n)
	}
	f(1, 1)
	f(2, 1, 2)
	f(3, 1, 2, 3)
	f(8, 1, 2, 4, 8)
	f(12, 1, 2, 4, 8, 12)
	f(16, 1, 2, 4, 8, 16)
}

// TestScalingPlan: a count is a variant per pool, direct first at each,
// each on the first n CPUs of the server's set; -pools restricts, -execs
// multiplies the queueing pools; quick runs GET only.
func TestScalingPlan(t *testing.T) {
	f := func(size int, wantCounts ...int) {
		t.Helper()
		o := DefaultOptions()
		o.Preset = "scaling"
		p, err := New(&o, size)
		require.NoError(t, err)
		assert.Equal(t, wantCounts, p.Counts)
		assert.Equal(t, []string{"get", "put"}, p.Workloads)
		assert.True(t, p.SaturateAll && p.ClosedAll)
		assert.False(t, p.Fixed || p.Overload || p.Profiles)
		require.Len(t, p.Variants, len(wantCounts)*len(Pools))
		for i, n := range wantCounts {
			v := p.Variants[i*len(Pools)]
			assert.Equal(t, Variant{Pool: "direct", CPUs: n}, v)
			assert.Equal(t, fmt.Sprintf("direct cpus=%d", n), v.Name())
			assert.Equal(t, []string{"-pool", "direct"}, v.Args(), "the count is the CPU set's, not a flag")
		}
	}
	f(1, 1)
	f(2, 1, 2)
	f(3, 1, 2, 3)
	f(8, 1, 2, 4, 8)
	f(16, 1, 2, 4, 8, 16)

	o := DefaultOptions()
	o.Preset, o.Quick, o.Pools, o.Execs = "scaling", true, []string{"lifo"}, []string{"handler", "worker"}
	p, err := New(&o, 2)
	require.NoError(t, err)
	var names []string
	for _, v := range p.Variants {
		names = append(names, v.Name())
	}
	assert.Equal(t, []string{"direct cpus=1", "lifo exec=handler cpus=1", "lifo exec=worker cpus=1", "direct cpus=2", "lifo exec=handler cpus=2", "lifo exec=worker cpus=2"}, names)
	assert.Equal(t, []string{"get"}, p.Workloads)
}

func TestLittleConns(t *testing.T) {
	f := func(rate float64, w time.Duration, maxConns, want int) {
		t.Helper()
		assert.Equal(t, want, LittleConns(rate, w, maxConns), "%v req/s × %v, at most %d", rate, w, maxConns)
	}
	f(268_000, 170*time.Microsecond, 4096, 92) // 2 × 45.56 in flight
	f(100_000, 2*time.Millisecond, 4096, 400)
	f(1000, time.Millisecond, 4096, MinConns) // 2 in flight: at least 64
	f(500_000, 10*time.Millisecond, 4096, 4096)
	f(500_000, 10*time.Millisecond, 256, 256)
	f(268_000, 0, 4096, MinConns) // unknown answer time
	f(0, time.Millisecond, 4096, MinConns)
}

// TestPairRoundLength: paired rounds are PairRound long, and Closed long
// in a comparison that did not record it. A full run pairs many rounds
// of a second; a quick one the fewest that bound an interval.
func TestPairRoundLength(t *testing.T) {
	tm := FullTiming()
	assert.Equal(t, time.Second, tm.PairRoundLength())
	assert.Equal(t, FullPairs, tm.ClosedPairs)
	assert.Equal(t, 5*time.Second, tm.Closed, "the cross-check keeps its own")
	tm.PairRound = 0
	assert.Equal(t, tm.Closed, tm.PairRoundLength(), "unset: the cross-check's rounds")
	q := QuickTiming()
	assert.Equal(t, time.Second, q.PairRoundLength())
	assert.Equal(t, MinPairs, q.ClosedPairs)
}

// TestPairPauseLength: full and quick runs pause PairPause before each
// paired round, shorter than either's search cooldown; a comparison that
// did not record a pause paused the cooldown.
func TestPairPauseLength(t *testing.T) {
	for _, tm := range []Timing{FullTiming(), QuickTiming()} {
		assert.Equal(t, PairPause, tm.PairPauseLength())
		assert.Less(t, tm.PairPauseLength(), tm.SatCooldown)
		tm.PairPause = 0
		assert.Equal(t, tm.SatCooldown, tm.PairPauseLength(), "unset: the cooldown")
	}
}
