// Package plan says what a comparison runs: its options and step
// lengths, the kvserver variants the presets make, and the load of the
// fixed-rate and overload steps. It is data and pure functions of data,
// so that a report can be written from a plan without the runner.
package plan

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Plan is what a preset runs: the variants (the baseline first), the
// workloads, and which steps.
type Plan struct {
	Preset    string
	Workloads []string
	Variants  []Variant
	// SaturateAll: every variant gets a saturation search; otherwise only
	// the baseline, whose rate sets the fixed and overload steps.
	SaturateAll bool
	// Paired: every variant but direct runs closed-loop rounds paired
	// with direct's (where Timing asks for pairs).
	Paired   bool `json:",omitempty"`
	Fixed    bool
	Overload bool
	Profiles bool
	// ClosedAll: every variant gets the closed-loop step (scaling);
	// otherwise only direct, as the cross-check of its saturation.
	ClosedAll bool
	// Counts are the scaling preset's kvserver CPU counts (nil: not a
	// scaling plan).
	Counts []int
	// OverloadFactor multiplies the baseline's saturation for the
	// overload step.
	OverloadFactor float64
	// Sweep names the swept parameter ("cap", "workers") for its chart.
	Sweep string
	// OwnRates: the fixed-rate step, the profile run and the overload's
	// probes run at their share of each variant's own median saturation,
	// not direct's: where capacities differ by orders of magnitude
	// (slow-backend), 70 % of direct's would only measure a growing queue.
	// The overload step still asks every variant the same.
	OwnRates bool
	// Metastable is the metastable preset's runs (nil: another preset).
	Metastable *Metastable `json:",omitempty"`
	// Writes is the writes preset's runs (nil: another preset).
	Writes *Writes `json:",omitempty"`
}

// presetPlans are each preset's workloads and steps (the full preset's
// workloads; -quick keeps the first); New adds the variants.
var presetPlans = map[string]Plan{
	"queues":       {Workloads: []string{"get", "put", "mixed:0.9"}, SaturateAll: true, Fixed: true, Overload: true, Profiles: true},
	"capacity":     {Workloads: []string{"get", "put"}, SaturateAll: true, Fixed: true, Sweep: "cap"},
	"policies":     {Workloads: []string{"mixed:0.5"}, Overload: true},
	"slow-backend": {Workloads: []string{"get"}, SaturateAll: true, Fixed: true, Overload: true, Profiles: true, Sweep: "workers", OwnRates: true},
	"overload":     {Workloads: []string{"mixed:0.5"}, Overload: true, OverloadFactor: 10},
	"scaling":      {Workloads: []string{"get", "put"}, SaturateAll: true, ClosedAll: true},
	"metastable":   {Workloads: []string{"get"}},
	"writes":       {Workloads: []string{"get"}}, // the read stream's; the flood's PUTs are its own
}

// presetPools are the pools each preset compares where -pools names
// none (the metastable preset's variants are its own).
var presetPools = map[string][]string{
	// queues: the pools, kvserver's default and the peer beside them,
	// each paired with direct (its CPU per request) and overloaded.
	"queues":       append(slices.Clone(Pools), AutoPool, PeerPool),
	"slow-backend": Pools, "overload": Pools, "scaling": Pools,
	"capacity": {"fifo", "lifo"},
	"policies": Pools[1:], // the queueing pools: all but the baseline
}

// checkNames refuses a name not in valid, listing the valid ones.
func checkNames(kind string, names, valid []string) error {
	for _, n := range names {
		if !slices.Contains(valid, n) {
			return fmt.Errorf("unknown %s %q; valid: %s", kind, n, strings.Join(valid, ", "))
		}
	}
	return nil
}

// variants builds a preset's variant list: direct first, then each
// queueing variant once per exec mode of -execs (kvserver's default when
// none is given). Limit variants are not multiplied: an adaptive limit
// applies to -exec handler only, kvserver's default.
type variants struct {
	execs []string
	list  []Variant
}

func newVariants(o *Options, base Variant) *variants {
	execs := o.Execs
	if len(execs) == 0 {
		execs = []string{""}
	}
	return &variants{execs: execs, list: []Variant{base}}
}

func (vs *variants) add(v Variant) {
	for _, e := range vs.execs {
		v.Exec = e
		vs.list = append(vs.list, v)
	}
}

// addEach adds v on each pool of pools but the baseline.
func (vs *variants) addEach(pools []string, v Variant) {
	for _, pl := range pools {
		if pl != Baseline {
			v.Pool = pl
			vs.add(v)
		}
	}
}

// perPool adds one variant per pool but the baseline and per value, made
// by variant, in the order of pools then values.
func perPool[T any](vs *variants, pools []string, values []T, variant func(pool string, value T) Variant) {
	for _, pl := range pools {
		if pl == Baseline {
			continue
		}
		for _, x := range values {
			vs.add(variant(pl, x))
		}
	}
}

// addLimits adds the limit variants: fifo and lifo (those of pools) at
// their defaults with each adaptive -limit of limits.
func (vs *variants) addLimits(pools, limits []string, with func(Variant) Variant) {
	for _, pl := range limitPools {
		if !slices.Contains(pools, pl) {
			continue
		}
		for _, l := range limits {
			vs.list = append(vs.list, with(Variant{Pool: pl, Limit: l}))
		}
	}
}

func none[T any](v T) T { return v }

// New builds the plan of o.Preset from o (already validated);
// serverCPUs is how many CPUs kvserver's set has (the scaling preset's
// counts come from it).
func New(o *Options, serverCPUs int) (*Plan, error) {
	base := Variant{Pool: Baseline}
	pools, policies, limits := o.Pools, o.Policies, o.Limits
	if pools == nil {
		pools = presetPools[o.Preset]
	}
	if policies == nil {
		policies = Policies
	}
	if limits == nil {
		limits = Limits
	}
	preset, ok := presetPlans[o.Preset]
	if !ok {
		return nil, fmt.Errorf("unknown preset %q; valid: %s", o.Preset, strings.Join(Presets, ", "))
	}
	p := &preset
	p.Preset, p.OverloadFactor = o.Preset, cmp.Or(o.Factor, p.OverloadFactor, 2)
	vs := newVariants(o, base)
	switch o.Preset {
	case "queues":
		vs.addEach(pools, Variant{})
	case "capacity":
		perPool(vs, pools, o.Caps, func(pl string, c int) Variant {
			return Variant{Pool: pl, Cap: c, CapSet: true}
		})
	case "policies", "overload":
		vs.addEach(pools, Variant{})
		// -queue-timeouts: each pool at its defaults but for
		// -queue-timeout, once per value.
		perPool(vs, pools, o.QueueTimeouts, func(pl string, qt time.Duration) Variant {
			return Variant{Pool: pl, QueueTimeout: qt, QueueTimeoutSet: true}
		})
		// The seeds' setup: each pool × policy with a bounded queue and
		// no shedding by age.
		perPool(vs, pools, policies, func(pl, policy string) Variant {
			return Variant{Pool: pl, Policy: policy, Cap: seedsCap, CapSet: true, QueueTimeoutSet: true}
		})
		for _, pl := range unboundedPools {
			if o.Preset == "overload" && slices.Contains(pools, pl) {
				vs.add(Variant{Pool: pl, Cap: -1, CapSet: true})
			}
		}
		vs.addLimits(pools, limits, none)
	case "slow-backend":
		delay := func(v Variant) Variant { v.IODelay, v.IODelayDist = o.IODelay, o.IODelayDist; return v }
		vs = newVariants(o, delay(base))
		perPool(vs, pools, o.Workers, func(pl string, w int) Variant {
			return delay(Variant{Pool: pl, Workers: w})
		})
		vs.addLimits(pools, limits, delay)
	case "scaling":
		p.Counts = ScalingCounts(max(serverCPUs, 1))
		vs = &variants{execs: vs.execs}
		for _, n := range p.Counts {
			vs.list = append(vs.list, Variant{Pool: Baseline, CPUs: n})
			vs.addEach(pools, Variant{CPUs: n})
		}
	case "metastable":
		slots := cmp.Or(o.StoreSlots, MetaIOConcurrency)
		store := func(v Variant) Variant {
			if o.FastStore {
				return v // plain Pebble, every pool at its own defaults
			}
			v.IODelay, v.IOConcurrency = MetaIODelay, slots
			if !v.IsBaseline() && v.Pool != Default && !v.IsPeer() {
				// One worker per store slot: with one per CPU a pool's own
				// slots, not the admission under test, would set its
				// capacity; with as many as the store's, requests wait in
				// the pool's queue, and the store is every variant's limit.
				// The default and the peers find their limits themselves.
				v.Workers = slots
			}
			return v
		}
		vs = &variants{list: []Variant{store(base)}}
		p.Metastable = newMetastable(o, store)
		p.Metastable.StoreSlots, p.Metastable.FastStore = slots, o.FastStore
		// Without -store-slots the runner sizes each client population's
		// store to what the loader can hold of its storm (SizeStorms).
		p.Metastable.SizeStorms = o.StoreSlots == 0 && !o.FastStore
	case "writes":
		p.Writes = newWrites(o)
		vs = &variants{list: p.Writes.Variants}
	}
	p.Variants = vs.list
	if o.Quick {
		p.Workloads = p.Workloads[:1:1] // no append may reach presetPlans
	}
	p.Paired = p.SaturateAll
	if o.Preset == "queues" && o.Repeat < MinPairs {
		// Fewer than MinPairs searches a pool give its saturation's
		// ratio to direct's no interval, so nothing could be ranked from
		// them; the paired rounds give each pool's throughput and CPU
		// ratios with theirs. So the pools are searched only where the
		// repeats bound an interval, and otherwise direct's saturation
		// alone is, which sets the other steps' rates.
		p.SaturateAll = false
	}
	if o.Workload != "" {
		p.Workloads = []string{o.Workload}
	}
	return p, nil
}

// ScalingCounts are the scaling preset's CPU counts for a server set of
// n CPUs: the powers of two up to n, and n itself where it is not one.
func ScalingCounts(n int) []int {
	var out []int
	for c := 1; c <= n; c *= 2 {
		out = append(out, c)
	}
	if len(out) > 0 && out[len(out)-1] != n {
		out = append(out, n)
	}
	return out
}
