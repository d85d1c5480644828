package compare

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The names kvserver accepts for -pool, -overflow, -exec and -limit.
// They are repeated here rather than imported because the load side
// talks to kvserver as a user would, over HTTP and as a process (it never
// imports the server's packages); kvserver itself refuses a name it does
// not know. Limits are the adaptive algorithms (fixed, kvserver's
// default, is every other variant).
var (
	Pools    = []string{"direct", "fifo", "lifo", "msqueue", "multiqueue", "adaptive"}
	Policies = []string{"reject", "drop-oldest", "caller-runs", "block"}
	Execs    = []string{"handler", "worker"}
	Limits   = []string{"gradient2", "vegas", "aimd"}
	Presets  = []string{"queues", "capacity", "policies", "slow-backend", "overload", "scaling"}
)

// baselinePool is the pool every other is compared against: no pool at all,
// the store call runs in the connection's handler.
const baselinePool = "direct"

// unboundedPools are the pools the overload preset also runs with -cap -1,
// as loadtest/overload.sh did: the named exception whose queue may grow.
var unboundedPools = []string{"msqueue"}

// limitPools are the pools the limit variants run on (issue 20).
var limitPools = []string{"fifo", "lifo"}

// seedsCap is the queue bound of the policy variants: with kvserver's
// default -cap (auto: -max-conns, one place per connection) a queue never
// fills and an overflow policy never applies, so the seeds' experiments
// name their bound, with -queue-timeout 0 (no shedding by age), as
// kvserver's defaults were when the seeds ran.
const seedsCap = 1024

// Variant is one kvserver configuration under comparison.
type Variant struct {
	Pool   string
	Policy string // "" = kvserver's default
	// Cap is passed as -cap when CapSet; -1 is unbounded.
	Cap    int
	CapSet bool
	// QueueTimeout is passed as -queue-timeout when QueueTimeoutSet (the
	// policy variants: 0, none).
	QueueTimeout    time.Duration
	QueueTimeoutSet bool
	// Workers is passed as -workers when > 0.
	Workers int
	// Exec is passed as -exec when set: "handler" or "worker".
	Exec string
	// Limit is passed as -limit when set: an adaptive algorithm.
	Limit string
	// CPUs (scaling preset), when > 0, starts kvserver on the first CPUs
	// of its set, this many.
	CPUs        int
	IODelay     time.Duration
	IODelayDist string
}

// Name is how tables and charts label v: "lifo", "fifo/drop-oldest",
// "fifo cap=64", "lifo workers=8", "msqueue unbounded", "lifo/reject
// cap=1024", "lifo exec=worker", "fifo limit=vegas", "lifo cpus=4". The
// policy variants' -queue-timeout 0 is not in the name: the preset's text
// and the settings line say it.
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
	if v.Exec != "" {
		b.WriteString(" exec=" + v.Exec)
	}
	if v.Limit != "" {
		b.WriteString(" limit=" + v.Limit)
	}
	if v.CPUs > 0 {
		b.WriteString(" cpus=" + strconv.Itoa(v.CPUs))
	}
	if v.QueueTimeoutSet && v.Policy == "" && !v.CapSet {
		b.WriteString(" queue-timeout=" + v.QueueTimeout.String())
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
	if v.QueueTimeoutSet {
		a = append(a, "-queue-timeout", v.QueueTimeout.String())
	}
	if v.Workers > 0 {
		a = append(a, "-workers", strconv.Itoa(v.Workers))
	}
	if v.Exec != "" {
		a = append(a, "-exec", v.Exec)
	}
	if v.Limit != "" {
		a = append(a, "-limit", v.Limit)
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

// AtDefaults tells whether v is a queueing pool at kvserver's default
// configuration: no -cap, -overflow, -queue-timeout, -workers or -limit
// flag, and the default -exec (handler): what issue 20 judges.
func (v Variant) AtDefaults() bool {
	return !v.IsBaseline() && v.Policy == "" && !v.CapSet && !v.QueueTimeoutSet && v.Workers == 0 &&
		v.Limit == "" && (v.Exec == "" || v.Exec == "handler")
}

// withoutCPUs is v run on its whole set: the scaling tables' row label.
func (v Variant) withoutCPUs() Variant { v.CPUs = 0; return v }

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

// add adds v once per exec mode.
func (vs *variants) add(v Variant) {
	for _, e := range vs.execs {
		v.Exec = e
		vs.list = append(vs.list, v)
	}
}

// perPool adds one variant per pool but the baseline and per value, made
// by variant, in the order of pools then values.
func perPool[T any](vs *variants, pools []string, values []T, variant func(pool string, value T) Variant) {
	for _, pl := range pools {
		if pl == baselinePool {
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

// newPlan builds the plan of o.Preset from o (already validated);
// serverCPUs is how many CPUs kvserver's set has (the scaling preset's
// counts come from it).
func newPlan(o *Options, serverCPUs int) (*plan, error) {
	base := Variant{Pool: baselinePool}
	pools, policies, limits := o.Pools, o.Policies, o.Limits
	if policies == nil {
		policies = Policies
	}
	if limits == nil {
		limits = Limits
	}
	p := &plan{Preset: o.Preset, OverloadFactor: 2}
	if o.Factor > 0 {
		p.OverloadFactor = o.Factor
	}
	// policyGrid is the seeds' setup: each pool × policy with a bounded
	// queue and no shedding by age.
	policyGrid := func(vs *variants) {
		perPool(vs, pools, policies, func(pl, policy string) Variant {
			return Variant{Pool: pl, Policy: policy, Cap: seedsCap, CapSet: true, QueueTimeoutSet: true}
		})
	}
	defaults := func(vs *variants) {
		for _, pl := range pools {
			if pl != baselinePool {
				vs.add(Variant{Pool: pl})
			}
		}
	}
	// timeoutSweep is -queue-timeouts: each pool at its defaults but for
	// -queue-timeout, once per value.
	timeoutSweep := func(vs *variants) {
		perPool(vs, pools, o.QueueTimeouts, func(pl string, qt time.Duration) Variant {
			return Variant{Pool: pl, QueueTimeout: qt, QueueTimeoutSet: true}
		})
	}
	var vs *variants
	switch o.Preset {
	case "queues":
		if pools == nil {
			pools = Pools
		}
		p.Workloads = []string{"get", "put", "mixed:0.9"}
		p.SaturateAll, p.Fixed, p.Overload, p.Profiles = true, true, true, true
		vs = newVariants(o, base)
		defaults(vs)
	case "capacity":
		if pools == nil {
			pools = []string{"fifo", "lifo"}
		}
		p.Workloads = []string{"get", "put"}
		p.SaturateAll, p.Fixed, p.Sweep = true, true, "cap"
		vs = newVariants(o, base)
		perPool(vs, pools, o.Caps, func(pl string, c int) Variant {
			return Variant{Pool: pl, Cap: c, CapSet: true}
		})
	case "policies":
		if pools == nil {
			pools = queuedPools()
		}
		p.Workloads = []string{"mixed:0.5"}
		p.Overload = true
		vs = newVariants(o, base)
		defaults(vs)
		timeoutSweep(vs)
		policyGrid(vs)
		vs.addLimits(pools, limits, none)
	case "slow-backend":
		if pools == nil {
			pools = Pools
		}
		p.Workloads = []string{"get"}
		p.SaturateAll, p.Fixed, p.Overload, p.Profiles, p.Sweep = true, true, true, true, "workers"
		p.OwnRates = true
		delay := func(v Variant) Variant { v.IODelay, v.IODelayDist = o.IODelay, o.IODelayDist; return v }
		vs = newVariants(o, delay(base))
		perPool(vs, pools, o.Workers, func(pl string, w int) Variant {
			return delay(Variant{Pool: pl, Workers: w})
		})
		vs.addLimits(pools, limits, delay)
	case "overload":
		if pools == nil {
			pools = Pools
		}
		p.Workloads = []string{"mixed:0.5"}
		p.Overload = true
		if o.Factor == 0 {
			p.OverloadFactor = 10
		}
		vs = newVariants(o, base)
		defaults(vs)
		timeoutSweep(vs)
		policyGrid(vs)
		for _, pl := range unboundedPools {
			if slices.Contains(pools, pl) {
				vs.add(Variant{Pool: pl, Cap: -1, CapSet: true})
			}
		}
		vs.addLimits(pools, limits, none)
	case "scaling":
		if pools == nil {
			pools = Pools
		}
		p.Workloads = []string{"get", "put"}
		p.SaturateAll, p.ClosedAll = true, true
		p.Counts = scalingCounts(max(serverCPUs, 1))
		vs = &variants{execs: newVariants(o, base).execs}
		for _, n := range p.Counts {
			vs.list = append(vs.list, Variant{Pool: baselinePool, CPUs: n})
			for _, pl := range pools {
				if pl != baselinePool {
					vs.add(Variant{Pool: pl, CPUs: n})
				}
			}
		}
	default:
		return nil, fmt.Errorf("unknown preset %q; valid: %s", o.Preset, strings.Join(Presets, ", "))
	}
	p.Variants = vs.list
	if o.Quick {
		p.Workloads = p.Workloads[:1]
	}
	if o.Workload != "" {
		p.Workloads = []string{o.Workload}
	}
	return p, nil
}
