package compare

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The names kvserver accepts for -pool and -overflow. They are repeated
// here rather than imported because the load side talks to kvserver as a
// user would, over HTTP and as a process (it never imports the server's
// packages); kvserver itself refuses a name it does not know.
var (
	Pools    = []string{"direct", "fifo", "lifo", "msqueue", "multiqueue", "adaptive"}
	Policies = []string{"reject", "drop-oldest", "caller-runs", "block"}
	Presets  = []string{"queues", "capacity", "policies", "slow-backend", "overload"}
)

// baselinePool is the pool every other is compared against: no pool at all,
// the store call runs in the connection's handler.
const baselinePool = "direct"

// unboundedPools are the pools the overload preset also runs with -cap -1,
// as loadtest/overload.sh did: the named exception whose queue may grow.
var unboundedPools = []string{"msqueue"}

// Variant is one kvserver configuration under comparison.
type Variant struct {
	Pool   string
	Policy string // "" = kvserver's default
	// Cap is passed as -cap when CapSet; -1 is unbounded.
	Cap    int
	CapSet bool
	// Workers is passed as -workers when > 0.
	Workers     int
	IODelay     time.Duration
	IODelayDist string
}

// Name is how tables and charts label v: "lifo", "fifo/drop-oldest",
// "fifo cap=64", "lifo workers=8", "msqueue unbounded".
func (v Variant) Name() string {
	var b strings.Builder
	b.WriteString(v.Pool)
	if v.Policy != "" {
		b.WriteString("/" + v.Policy)
	}
	switch {
	case v.CapSet && v.Cap < 0:
		b.WriteString(" unbounded")
	case v.CapSet:
		b.WriteString(" cap=" + strconv.Itoa(v.Cap))
	}
	if v.Workers > 0 {
		b.WriteString(" workers=" + strconv.Itoa(v.Workers))
	}
	return b.String()
}

// Slug is Name made safe for a folder name.
func (v Variant) Slug() string {
	return strings.NewReplacer("/", "-", " ", "-", "=", "").Replace(v.Name())
}

// PolicyLabel is the policy column of a table.
func (v Variant) PolicyLabel() string {
	switch {
	case v.Pool == baselinePool:
		return "-"
	case v.CapSet && v.Cap < 0:
		return "unbounded"
	case v.Policy == "":
		return "default"
	}
	return v.Policy
}

// Args are v's kvserver flags.
func (v Variant) Args() []string {
	a := []string{"-pool", v.Pool}
	if v.Policy != "" {
		a = append(a, "-overflow", v.Policy)
	}
	if v.CapSet {
		a = append(a, "-cap", strconv.Itoa(v.Cap))
	}
	if v.Workers > 0 {
		a = append(a, "-workers", strconv.Itoa(v.Workers))
	}
	if v.IODelay > 0 {
		a = append(a, "-io-delay", v.IODelay.String())
		if v.IODelayDist != "" {
			a = append(a, "-io-delay-dist", v.IODelayDist)
		}
	}
	return a
}

// IsBaseline tells whether v is the direct pool every ratio refers to.
func (v Variant) IsBaseline() bool { return v.Pool == baselinePool }

// plan is what a preset runs: the variants (the baseline first), the
// workloads, and which steps.
type plan struct {
	Preset    string
	Workloads []string
	Variants  []Variant
	// SaturateAll: every variant gets a saturation search; otherwise only
	// the baseline, whose rate sets the fixed and overload steps.
	SaturateAll bool
	Fixed       bool
	Overload    bool
	Profiles    bool
	// OverloadFactor multiplies the baseline's saturation for the
	// overload step.
	OverloadFactor float64
	// Sweep names the swept parameter ("cap", "workers") for its chart.
	Sweep string
	// OwnRates: the fixed-rate step, the profile run and the probes around
	// the overload run at their share of each variant's own median
	// saturation, not of direct's. For variants whose capacities differ
	// by orders of magnitude (slow-backend: W workers over a store that
	// sleeps serve about W/delay), 70 % of direct's would overload a
	// 2-worker pool 25×, and its latencies would measure nothing but the
	// queue growing. The overload step still asks every variant for the
	// same multiple of direct's.
	OwnRates bool
}

// queuedPools is Pools without the baseline.
func queuedPools() []string { return Pools[1:] }

// checkNames refuses a name not in valid, listing the valid ones.
func checkNames(kind string, names, valid []string) error {
	for _, n := range names {
		if !slices.Contains(valid, n) {
			return fmt.Errorf("unknown %s %q; valid: %s", kind, n, strings.Join(valid, ", "))
		}
	}
	return nil
}

// perPool is one variant per pool but the baseline and per value, made by
// variant, in the order of pools then values.
func perPool[T any](pools []string, values []T, variant func(pool string, value T) Variant) []Variant {
	var vs []Variant
	for _, pl := range pools {
		if pl == baselinePool {
			continue
		}
		for _, v := range values {
			vs = append(vs, variant(pl, v))
		}
	}
	return vs
}

func withPolicy(pool, policy string) Variant { return Variant{Pool: pool, Policy: policy} }

// newPlan builds the plan of o.Preset from o (already validated).
func newPlan(o *Options) (*plan, error) {
	base := Variant{Pool: baselinePool}
	pools, policies := o.Pools, o.Policies
	if policies == nil {
		policies = Policies
	}
	p := &plan{Preset: o.Preset, OverloadFactor: 2}
	if o.Factor > 0 {
		p.OverloadFactor = o.Factor
	}
	switch o.Preset {
	case "queues":
		if pools == nil {
			pools = Pools
		}
		p.Workloads = []string{"get", "put", "mixed:0.9"}
		p.SaturateAll, p.Fixed, p.Overload, p.Profiles = true, true, true, true
		p.Variants = append(p.Variants, base)
		for _, pl := range pools {
			if pl != baselinePool {
				p.Variants = append(p.Variants, Variant{Pool: pl})
			}
		}
	case "capacity":
		if pools == nil {
			pools = []string{"fifo", "lifo"}
		}
		p.Workloads = []string{"get", "put"}
		p.SaturateAll, p.Fixed, p.Sweep = true, true, "cap"
		p.Variants = append([]Variant{base}, perPool(pools, o.Caps, func(pl string, c int) Variant {
			return Variant{Pool: pl, Cap: c, CapSet: true}
		})...)
	case "policies":
		if pools == nil {
			pools = queuedPools()
		}
		p.Workloads = []string{"mixed:0.5"}
		p.Overload = true
		p.Variants = append([]Variant{base}, perPool(pools, policies, withPolicy)...)
	case "slow-backend":
		if pools == nil {
			pools = Pools
		}
		p.Workloads = []string{"get"}
		p.SaturateAll, p.Fixed, p.Overload, p.Profiles, p.Sweep = true, true, true, true, "workers"
		p.OwnRates = true
		delay := func(v Variant) Variant { v.IODelay, v.IODelayDist = o.IODelay, o.IODelayDist; return v }
		p.Variants = append([]Variant{delay(base)}, perPool(pools, o.Workers, func(pl string, w int) Variant {
			return delay(Variant{Pool: pl, Workers: w})
		})...)
	case "overload":
		if pools == nil {
			pools = Pools
		}
		p.Workloads = []string{"mixed:0.5"}
		p.Overload = true
		if o.Factor == 0 {
			p.OverloadFactor = 10
		}
		p.Variants = append([]Variant{base}, perPool(pools, policies, withPolicy)...)
		for _, pl := range unboundedPools {
			if slices.Contains(pools, pl) {
				p.Variants = append(p.Variants, Variant{Pool: pl, Cap: -1, CapSet: true})
			}
		}
	default:
		return nil, fmt.Errorf("unknown preset %q; valid: %s", o.Preset, strings.Join(Presets, ", "))
	}
	if o.Quick {
		p.Workloads = p.Workloads[:1]
	}
	if o.Workload != "" {
		p.Workloads = []string{o.Workload}
	}
	return p, nil
}
