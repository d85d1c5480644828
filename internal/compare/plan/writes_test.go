package plan

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writesPlan is the writes preset's plan after edit changes its options
// (as flags would, before the defaults are applied).
func writesPlan(t *testing.T, quick bool, edit func(o *Options)) (*Plan, Options) {
	t.Helper()
	o := DefaultOptions()
	o.Preset, o.Quick = "writes", quick
	if edit != nil {
		edit(&o)
	}
	o.ApplyDefaults(false, o.Repeat != DefaultOptions().Repeat) // -repeat given where edit changed it
	require.NoError(t, o.Validate())
	p, err := New(&o, 1)
	require.NoError(t, err)
	require.NotNil(t, p.Writes)
	return p, o
}

func names(vs []Variant) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Name())
	}
	return out
}

// The full preset runs direct, kvserver's default (no pool flag: auto)
// and the pools a user would try at their defaults, 3 times each; quick,
// direct and the default twice; both at the preset's shape, over 100,000
// ids, the flood writing over twice as many.
func TestWritesPlanVariants(t *testing.T) {
	p, o := writesPlan(t, false, nil)
	w := p.Writes
	assert.Equal(t, []string{"direct", "default", "failsafe", "fifo", "lifo", "adaptive"}, names(w.Variants))
	assert.Equal(t, w.Variants, p.Variants, "the comparison's variants are the runs'")
	assert.Nil(t, w.Variants[1].Args(), "the default: kvserver given no pool flag")
	assert.Equal(t, 3, w.Repeat)
	assert.Equal(t, 18, w.Runs())
	assert.Equal(t, uint64(QuickKeys), o.Keys)
	assert.Equal(t, 2*o.Keys, w.FloodKeys, "fresh ids and existing ones")
	assert.Equal(t, []string{"get"}, p.Workloads)
	assert.False(t, p.SaturateAll || p.Paired || p.Fixed || p.Overload || p.Profiles, "no search, no steps: the runs alone")
	assert.Equal(t, Writes{Variants: w.Variants, Repeat: 3, ReadRate: 3000, Duration: 40 * time.Second, FloodAt: 10 * time.Second, FloodFor: 20 * time.Second,
		FloodConns: 256, FloodValueSize: 16 << 10, FloodKeys: 200_000, Interval: time.Second}, *w)
	assert.Equal(t, 30*time.Second, w.FloodEnd())

	q, _ := writesPlan(t, true, nil)
	assert.Equal(t, []string{"direct", "default", "failsafe"}, names(q.Writes.Variants))
	assert.Equal(t, 2, q.Writes.Repeat)
	assert.Equal(t, 6, q.Writes.Runs())

	r, _ := writesPlan(t, false, func(o *Options) { o.Pools = []string{"lifo", "direct", "auto", "msqueue"} })
	assert.Equal(t, []string{"direct", "default", "failsafe", "lifo", "msqueue"}, names(r.Writes.Variants), "-pools: direct, the default and the peer always, once")
}

// Runs are interleaved: every variant's first repetition, then every
// variant's second, so that the machine's drift falls on all alike.
func TestWritesPlanInterleaves(t *testing.T) {
	p, _ := writesPlan(t, true, func(o *Options) { o.Repeat = 4 })
	var got []string
	for _, r := range p.Writes.Order() {
		got = append(got, r.Variant.Name()+"/"+string(rune('0'+r.Repeat)))
	}
	assert.Equal(t, []string{"direct/1", "default/1", "failsafe/1", "direct/2", "default/2", "failsafe/2",
		"direct/3", "default/3", "failsafe/3", "direct/4", "default/4", "failsafe/4"}, got)
}

// The flood's shape flags, within their bounds, and refused elsewhere.
func TestWritesOptions(t *testing.T) {
	_, o := writesPlan(t, false, func(o *Options) {
		o.ReadRate, o.FloodConns, o.FloodValueSize, o.FloodAt, o.FloodFor, o.ReadFor = 1000, 1024, 64<<10, 5*time.Second, 10*time.Second, 15*time.Second
	})
	assert.Equal(t, 1000.0, o.ReadRate)
	bad := func(want string, edit func(o *Options)) {
		t.Helper()
		o := DefaultOptions()
		o.Preset = "writes"
		edit(&o)
		o.ApplyDefaults(false, false)
		err := o.Validate()
		require.Error(t, err)
		assert.Contains(t, err.Error(), want)
	}
	bad("-flood-conns 32: want 64 to 1024", func(o *Options) { o.FloodConns = 32 })
	bad("-flood-conns 2048", func(o *Options) { o.FloodConns = 2048 })
	bad("-flood-value-size 70000: want 1 to 65536", func(o *Options) { o.FloodValueSize = 70000 })
	bad("ends past -read-for 40s", func(o *Options) { o.FloodFor = 31 * time.Second })
	bad("-read-rate -5", func(o *Options) { o.ReadRate = -5 })
	bad("-policies", func(o *Options) { o.Policies = []string{"reject"} })
	bad("-workload put", func(o *Options) { o.Workload = "put" })

	o = DefaultOptions()
	o.FloodConns = 512
	err := o.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-preset queues has none")
}
