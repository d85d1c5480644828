package plan

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func metastablePlan(t *testing.T, quick bool, set ...func(*Options)) *Plan {
	t.Helper()
	o := DefaultOptions()
	o.Preset, o.Quick = "metastable", quick
	for _, f := range set {
		f(&o)
	}
	o.ApplyDefaults(false, false)
	require.NoError(t, o.Validate())
	p, err := New(&o, 1)
	require.NoError(t, err)
	return p
}

// TestMetastablePlan: direct alone is searched, with the store
// stand-in's flags; the runs are every model × variant but the deadline
// variants under none: 6 × 11 − 2 = 64 in full; in quick, every model ×
// direct, the default, the two peers and the bounded fifo: 6 × 5. The
// default and the peers find their own limits: no -workers of the
// preset's. Without -store-slots the runner sizes each population's
// store (SizeStorms).
func TestMetastablePlan(t *testing.T) {
	p := metastablePlan(t, false)
	require.Len(t, p.Variants, 1)
	assert.Equal(t, []string{"-pool", "direct", "-io-delay", "1ms", "-io-concurrency", "16"}, p.Variants[0].Args())
	assert.Equal(t, []string{"get"}, p.Workloads)
	assert.False(t, p.Fixed || p.Overload || p.Profiles || p.SaturateAll)
	m := p.Metastable
	require.NotNil(t, m)
	assert.True(t, m.SizeStorms, "no -store-slots: each population's store sized to the loader")
	var names []string
	for _, v := range m.Variants {
		names = append(names, v.Name())
		assert.Contains(t, v.Variant.Args(), "-io-concurrency", v.Name())
		switch v.Variant.Pool {
		case Baseline:
		case Default:
			assert.Equal(t, []string{"-io-delay", "1ms", "-io-concurrency", "16"}, v.Variant.Args(), "default: no flag but the store's")
		case PeerPool, PeerPriorityPool:
			assert.Equal(t, []string{"-pool", v.Variant.Pool, "-io-delay", "1ms", "-io-concurrency", "16"}, v.Variant.Args(), "the peer at its own defaults")
		default:
			assert.Equal(t, MetaIOConcurrency, v.Variant.Workers, "%s: a worker per store slot", v.Name())
		}
	}
	assert.Equal(t, "fifo-limitgradient2", m.Variants[8].Slug())
	assert.Equal(t, []string{"direct", "default", "failsafe", "failsafe-priority", "fifo", "lifo", "adaptive", "fifo cap=256", "fifo limit=gradient2", "fifo+deadlines", "lifo+deadlines"}, names)
	assert.Equal(t, []string{"none", "untuned", "retry", "backoff", "budget", "throttle"}, m.Models)
	assert.Equal(t, 64, m.Runs())
	assert.Equal(t, 38*time.Second, m.Timing.Duration())
	assert.Less(t, time.Duration(m.Runs())*m.Timing.Duration(), 41*time.Minute, "full: the runs, a start each (about 2 s) and the searches: about 48 minutes")

	q := metastablePlan(t, true).Metastable
	assert.Equal(t, 30, q.Runs())
	assert.Equal(t, []string{"none", "untuned", "retry", "backoff", "budget", "throttle"}, q.Models, "quick: every population, none included")
	assert.Less(t, time.Duration(q.Runs())*q.Timing.Duration(), 6*time.Minute, "quick: the runs, a start each and the searches: about 9 minutes")
	assert.True(t, q.Timing.Hold < q.Timing.After, "a recovery must be able to show its hold")

	seen := map[string]bool{}
	for _, v := range m.Variants {
		assert.False(t, seen[v.Slug()], "two variants share the folder %s", v.Slug())
		seen[v.Slug()] = true
	}
}

// TestMetastablePools: -pools keeps direct, the default and the
// variants of the pools it names (the full preset's every variant takes
// about 48 minutes); -store-slots sets every population's store and
// turns the sizing off.
func TestMetastablePools(t *testing.T) {
	p := metastablePlan(t, false, func(o *Options) { o.Pools = Peers })
	var names []string
	for _, v := range p.Metastable.Variants {
		names = append(names, v.Name())
	}
	assert.Equal(t, []string{"direct", "default", "failsafe", "failsafe-priority"}, names)
	assert.Equal(t, 24, p.Metastable.Runs())

	p = metastablePlan(t, false, func(o *Options) { o.Pools, o.StoreSlots = []string{"fifo"}, 4 })
	assert.Len(t, p.Metastable.Variants, 6, "direct, the default and fifo's four")
	assert.False(t, p.Metastable.SizeStorms, "-store-slots wins")
	assert.Equal(t, 4, p.Metastable.Slots())
}

func TestMetastableRepeatAndFactor(t *testing.T) {
	o := DefaultOptions()
	o.Preset, o.Repeat, o.Factor = "metastable", 3, 3
	o.ApplyDefaults(false, true)
	require.NoError(t, o.Validate())
	p, err := New(&o, 1)
	require.NoError(t, err)
	assert.Equal(t, 3*64, p.Metastable.Runs())
	assert.Equal(t, 3.0, p.Metastable.Timing.Factor)
	assert.Equal(t, uint64(QuickKeys), o.Keys)
}

// TestMetastableRefusesWhatDoesNotApply: its variants are its question.
func TestMetastableRefusesWhatDoesNotApply(t *testing.T) {
	f := func(set func(o *Options), flag string) {
		t.Helper()
		o := DefaultOptions()
		o.Preset = "metastable"
		set(&o)
		err := o.Validate()
		require.Error(t, err, flag)
		assert.Contains(t, err.Error(), flag)
	}
	f(func(o *Options) { o.Policies = []string{} }, "-policies")
	f(func(o *Options) { o.Execs = []string{"worker"} }, "-execs")
	f(func(o *Options) { o.Limits = []string{"vegas"} }, "-limits")
	f(func(o *Options) { o.QueueTimeouts = []time.Duration{0} }, "-queue-timeouts")
	f(func(o *Options) { o.Workload = "put" }, "-workload")
	f(func(o *Options) { o.Factor = 1 }, "-factor")
}

// TestMetastableClientFlags: client flags run the preset under that one
// population (CustomModel) with its flags kept for the runner and the
// report; another preset refuses them.
func TestMetastableClientFlags(t *testing.T) {
	o := DefaultOptions()
	o.Preset, o.Clients = "metastable", []string{"-clients=untuned", "-client-timeout=300ms"}
	o.ApplyDefaults(false, false)
	require.NoError(t, o.Validate())
	p, err := New(&o, 1)
	require.NoError(t, err)
	assert.Equal(t, []string{CustomModel}, p.Metastable.Models)
	assert.Equal(t, o.Clients, p.Metastable.ClientArgs)
	assert.Equal(t, 11, p.Metastable.Runs(), "every variant, the deadline ones too")

	o = DefaultOptions()
	o.Preset, o.Clients = "queues", []string{"-clients=retry"}
	assert.ErrorContains(t, o.Validate(), "metastable")
}

// TestMetastableFastStore: -fast-store runs the same variants on plain
// Pebble (no stand-in flag, no workers of the preset's), and is refused
// with the stand-in's size or another preset.
func TestMetastableFastStore(t *testing.T) {
	o := DefaultOptions()
	o.Preset, o.Quick, o.FastStore = "metastable", true, true
	o.ApplyDefaults(false, false)
	require.NoError(t, o.Validate())
	p, err := New(&o, 1)
	require.NoError(t, err)
	assert.Equal(t, []string{"-pool", "direct"}, p.Variants[0].Args())
	m := p.Metastable
	assert.True(t, m.FastStore)
	assert.Zero(t, m.Slots(), "no stand-in, no slots")
	for _, v := range m.Variants {
		assert.NotContains(t, v.Variant.Args(), "-io-delay", v.Name())
		assert.Zero(t, v.Variant.Workers, v.Name())
	}

	o.StoreSlots = 4
	assert.ErrorContains(t, o.Validate(), "-store-slots 4 sizes the store stand-in, which -fast-store leaves out")
	o.StoreSlots, o.Preset = 0, "queues"
	assert.ErrorContains(t, o.Validate(), "-fast-store sets the metastable preset's store")
}
