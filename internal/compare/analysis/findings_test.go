package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/cpuset"
)

// comparisonOf builds a queues comparison of one workload, "get", whose
// variants (named pools) have the given saturation runs.
func comparisonOf(t *testing.T, sat map[string][]float64, order ...string) *result.Comparison {
	t.Helper()
	wr := &result.WorkloadResult{Workload: "get"}
	for _, name := range order {
		v := &result.VariantResult{Variant: plan.Variant{Pool: name}, Name: name}
		for i, r := range sat[name] {
			v.Sat = append(v.Sat, result.SatRun{Repeat: i + 1, Rate: r, Validated: true})
		}
		wr.Variants = append(wr.Variants, v)
	}
	o := plan.DefaultOptions()
	p, err := plan.New(&o, 2)
	require.NoError(t, err)
	return &result.Comparison{Preset: "queues", Options: o, Plan: p, Workloads: []*result.WorkloadResult{wr},
		Criteria: result.Criteria{MaxErrorRate: 0.001, LoaderBusy: 0.9}}
}

// find is a's one finding of kind about "get".
func find(t *testing.T, a *Analysis, kind Kind) Finding {
	t.Helper()
	f, ok := findIn(a, kind, "get")
	require.True(t, ok, "no %s finding in %+v", kind, a.Findings)
	return f
}

func kinds(a *Analysis) []Kind {
	var out []Kind
	for _, f := range a.Findings {
		out = append(out, f.Kind)
	}
	return out
}

// TestSaturationLeadsAndTies: the lead and each pool against direct are
// decided by the saturations' ratio paired by repeat, named only where
// its 95 % interval excludes 1. Three repeats bound no interval, however
// far apart their ranges lie: a tie, and no difference from direct.
func TestSaturationLeadsAndTies(t *testing.T) {
	a := Analyze(comparisonOf(t, map[string][]float64{
		"direct": {40000, 41000, 40500},
		"fifo":   {30000, 31000, 30500},
		"lifo":   {35000, 36000, 35500},
	}, "direct", "fifo", "lifo"))
	lead := find(t, a, SaturationLead)
	assert.Equal(t, Tie, lead.Verdict, "ranges apart, but 3 pairs bound no interval")
	assert.Equal(t, []string{"direct", "lifo"}, lead.Variants, "the best, then the runner-up, by median")
	d, _ := lead.Figure("direct", Saturation)
	assert.Equal(t, 40500.0, d.Value)
	assert.Equal(t, &Interval{Lo: 40000, Hi: 41000, N: 3}, d.Interval, "the range of the searches")
	r, ok := lead.Figure("lifo", SatRatio)
	require.True(t, ok, "the runner-up's ratio to the best")
	assert.InDelta(t, 35500.0/40500, r.Value, 1e-9, "the median of the pairs' ratios")
	assert.Equal(t, 3, r.Interval.N)
	assert.True(t, math.IsInf(r.Interval.Lo, -1) && math.IsInf(r.Interval.Hi, 1), "unbounded under 6 pairs")
	assert.Equal(t, Unbounded, r.Verdict)
	assert.Equal(t, "lifo's saturation against direct's, paired by repeat: 0.88× (n=3: too few pairs for an interval)", lead.Note)
	vs := find(t, a, SaturationVsDirect)
	assert.Equal(t, Tied, vs.Verdict, "no 95 % interval from 3 pairs: no difference measurable")
	assert.Equal(t, []string{"fifo", "lifo"}, vs.Variants)
	assert.NotContains(t, kinds(a), ProfileGrowth)

	// Six repeats, every pair about 0.8: below direct with a finite
	// interval, and a clear lead.
	a = Analyze(comparisonOf(t, map[string][]float64{
		"direct": {40000, 42000, 41000, 39000, 40500, 41500},
		"fifo":   {32000, 33500, 32900, 31300, 32300, 33100},
	}, "direct", "fifo"))
	vs = find(t, a, SaturationVsDirect)
	assert.Equal(t, Below, vs.Verdict)
	assert.Equal(t, []string{"fifo"}, vs.Variants)
	r, _ = vs.Figure("fifo", SatRatio)
	assert.InDelta(t, 0.8, r.Value, 0.005)
	assert.Equal(t, Interval{Lo: r.Interval.Lo, Hi: r.Interval.Hi, N: 6, Level: 0.95}, *r.Interval)
	assert.True(t, r.Interval.Lo > 0.77 && r.Interval.Hi < 0.82, "finite, below 1: %+v", r.Interval)
	assert.Equal(t, Below, r.Verdict)
	lead = find(t, a, SaturationLead)
	assert.Equal(t, Clear, lead.Verdict)
	assert.Equal(t, []string{"direct", "fifo"}, lead.Variants)
	assert.Contains(t, lead.Note, "fifo's saturation against direct's, paired by repeat: 0.80× (0.")

	// Six repeats above direct in every pair: above.
	a = Analyze(comparisonOf(t, map[string][]float64{
		"direct": {40000, 42000, 41000, 39000, 40500, 41500},
		"lifo":   {44000, 46300, 45000, 43000, 44500, 45600},
	}, "direct", "lifo"))
	assert.Equal(t, Above, find(t, a, SaturationVsDirect).Verdict)
	r, _ = find(t, a, SaturationVsDirect).Figure("lifo", SatRatio)
	assert.Equal(t, Above, r.Verdict)
	assert.Equal(t, []string{"lifo", "direct"}, find(t, a, SaturationLead).Variants)

	// Six repeats whose pairs straddle 1: no difference, and a tie,
	// though lifo's median is higher.
	a = Analyze(comparisonOf(t, map[string][]float64{
		"direct": {40000, 42000, 41000, 39000, 40500, 41500},
		"lifo":   {41000, 41000, 41500, 38500, 40000, 43000},
	}, "direct", "lifo"))
	vs = find(t, a, SaturationVsDirect)
	assert.Equal(t, Tied, vs.Verdict)
	r, _ = vs.Figure("lifo", SatRatio)
	assert.False(t, math.IsInf(r.Interval.Lo, 0), "six pairs bound an interval")
	assert.True(t, r.Interval.Lo < 1 && r.Interval.Hi > 1)
	assert.Equal(t, NoDifference, r.Verdict)
	lead = find(t, a, SaturationLead)
	assert.Equal(t, Tie, lead.Verdict, "the interval includes 1")
	assert.Contains(t, lead.Note, "paired by repeat: ~ ")

	a = Analyze(comparisonOf(t, map[string][]float64{"direct": {40000}, "lifo": {30000}}, "direct", "lifo"))
	lead = find(t, a, SaturationLead)
	assert.Equal(t, Tie, lead.Verdict, "one run has no spread: no winner")
	assert.Contains(t, lead.Note, "n=1: too few pairs")

	// Equal medians: the names order them, whatever the plan's order.
	a = Analyze(comparisonOf(t, map[string][]float64{"lifo": {5, 5}, "fifo": {5, 5}}, "lifo", "fifo"))
	assert.Equal(t, []string{"fifo", "lifo"}, find(t, a, SaturationLead).Variants)

	c := comparisonOf(t, map[string][]float64{"direct": {40000, 40000}, "lifo": {30000, 31000}}, "direct", "lifo")
	c.Workloads[0].Variants[0].Sat[1].HitMax = true
	a = Analyze(c)
	capped := find(t, a, SearchCapped)
	assert.Equal(t, []string{"direct"}, capped.Variants)
	assert.Equal(t, NotRanked, capped.Verdict)
	assert.NotContains(t, kinds(a), SaturationLead, "a floor is not a saturation")
}

// TestLoaderBoundSaturationIsALowerBound: a saturation whose search was
// loader-bound is a lower bound with the loader's CPUs and no ratio, and
// is never ranked.
func TestLoaderBoundSaturationIsALowerBound(t *testing.T) {
	c := comparisonOf(t, map[string][]float64{
		"direct": {40000, 41000, 40500},
		"fifo":   {30000, 31000, 30500},
		"lifo":   {104000},
	}, "direct", "fifo", "lifo")
	lifo := c.Workloads[0].Variants[2]
	lifo.Sat[0].LoaderBound, lifo.Sat[0].LoaderCPUs = true, 1
	a := Analyze(c)
	s := a.Workloads[0].Variant("lifo").Sat
	assert.True(t, s.LowerBound)
	assert.Equal(t, 1, s.LoaderCPUs)
	assert.True(t, math.IsNaN(s.Ratio), "no ratio for a lower bound")
	assert.InDelta(t, 30500.0/40500, a.Workloads[0].Variant("fifo").Sat.Ratio, 1e-9)

	lower := find(t, a, SaturationLowerBound)
	assert.Equal(t, []string{"lifo"}, lower.Variants)
	assert.Equal(t, 104000.0, lower.Value("lifo", Saturation))
	assert.Equal(t, 1.0, lower.Value("lifo", LoaderCPUs))
	lead := find(t, a, SaturationLead)
	assert.Equal(t, []string{"direct", "fifo"}, lead.Variants, "lifo is not ranked")
	for _, f := range kindsIn(a, SaturationVsDirect) {
		assert.NotContains(t, f.Variants, "lifo", "a lower bound is not compared with direct")
	}

	// Direct itself loader-bound: nothing is compared with it.
	c = comparisonOf(t, map[string][]float64{"direct": {60000, 61000}, "fifo": {30000, 31000}}, "direct", "fifo")
	for i := range c.Workloads[0].Variants[0].Sat {
		c.Workloads[0].Variants[0].Sat[i].LoaderBound, c.Workloads[0].Variants[0].Sat[i].LoaderCPUs = true, 2
	}
	a = Analyze(c)
	assert.Equal(t, []Kind{SaturationLowerBound}, kinds(a))
	assert.Equal(t, 60500.0, find(t, a, SaturationLowerBound).Value("direct", Saturation))
	assert.True(t, math.IsNaN(a.Workloads[0].Variant("fifo").Sat.Ratio), "no ratio to a lower bound")
}

func TestFindingsUnderOverload(t *testing.T) {
	c := comparisonOf(t, nil, "direct", "fifo", "lifo")
	vs := c.Workloads[0].Variants
	vs[0].Overload = &result.OverloadRun{Served: 10, ServedP99: 300 * time.Millisecond, Verdict: "PASS"}
	vs[1].Overload = &result.OverloadRun{Served: 10, ServedP99: 20 * time.Millisecond, Verdict: "FAIL: exit 1 on SIGTERM"}
	vs[2].Overload = &result.OverloadRun{Served: 10, ServedP99: 50 * time.Millisecond, Verdict: "PASS"}
	a := Analyze(c)
	slo := find(t, a, OverloadSLO)
	assert.Equal(t, SomeWithin, slo.Verdict)
	assert.Equal(t, float64(100*time.Millisecond), slo.Value("", SLO))
	for name, want := range map[string]Verdict{"direct": Over, "fifo": Within, "lifo": Within} {
		f, _ := slo.Figure(name, ServedP99)
		assert.Equal(t, want, f.Verdict, name)
	}
	failed := find(t, a, OverloadFailed)
	assert.Equal(t, []string{"fifo"}, failed.Variants)
	r, _ := failed.Figure("fifo", Reasons)
	assert.Equal(t, "exit 1 on SIGTERM", r.Text)
	assert.NotContains(t, kinds(a), OverloadLoaderBehind, "only where the loader fell behind")
	assert.NotContains(t, kinds(a), OverloadPassed, "not with a failure")

	vs[1].Overload.ServedP99, vs[2].Overload.ServedP99 = time.Second, time.Second
	vs[1].Overload.Verdict = "exception: p99 not normal (≤ 5 ms) within 5s"
	a = Analyze(c)
	assert.Equal(t, NoneWithin, find(t, a, OverloadSLO).Verdict)
	assert.Equal(t, []string{"fifo"}, find(t, a, OverloadException).Variants)
	assert.NotContains(t, kinds(a), OverloadPassed, "not with an exception that has reasons")

	vs[1].Overload.Verdict = "exception (unbounded)"
	assert.Contains(t, kinds(Analyze(c)), OverloadPassed)

	// A loader that fell behind: the p99 from the send is given beside.
	vs[2].Overload.Asked, vs[2].Overload.Planned, vs[2].Overload.Sent = 1000, 1000, 400
	vs[0].Overload.ServedP99Uncorrected, vs[1].Overload.ServedP99Uncorrected = time.Second, time.Second
	vs[2].Overload.ServedP99Uncorrected = 30 * time.Millisecond
	behind := find(t, Analyze(c), OverloadLoaderBehind)
	assert.Equal(t, []string{"lifo"}, behind.Variants)
	assert.Equal(t, 40.0, behind.Value("lifo", SentShare))
	f, _ := behind.Figure("lifo", ServedP99FromSend)
	assert.Equal(t, Within, f.Verdict)
	f, _ = behind.Figure("direct", ServedP99FromSend)
	assert.Equal(t, Over, f.Verdict)
}

func TestGoodputGroupsBySheddingNotByPolicy(t *testing.T) {
	c := comparisonOf(t, nil, "direct", "fifo", "lifo", "adaptive")
	vs := c.Workloads[0].Variants
	vs[0].Overload = &result.OverloadRun{Served: 10, Goodput: 20000}
	vs[1].Overload = &result.OverloadRun{Served: 10, Shed: 8, ShedPct: 40, Goodput: 18000}
	vs[2].Overload = &result.OverloadRun{Served: 10, Goodput: 26000}
	vs[3].Overload = &result.OverloadRun{Served: 10, Shed: 2, ShedPct: 17.5, Goodput: 15000}
	g := find(t, Analyze(c), OverloadGoodput)
	assert.Equal(t, []string{"direct", "fifo", "lifo", "adaptive"}, g.Variants)
	f, _ := g.Figure("fifo", Goodput)
	assert.Equal(t, Shed, f.Verdict)
	f, _ = g.Figure("lifo", Goodput)
	assert.Equal(t, Kept, f.Verdict)
	f, _ = g.Figure(GroupKept, Goodput)
	assert.Equal(t, &Interval{Lo: 20000, Hi: 26000, N: 2}, f.Interval)
	f, _ = g.Figure(GroupKept, GoodputVsDirect)
	assert.Equal(t, &Interval{Lo: 1, Hi: 1.3, N: 2}, f.Interval)
	f, _ = g.Figure(GroupShed, ShedPct)
	assert.Equal(t, &Interval{Lo: 17.5, Hi: 40, N: 2}, f.Interval)

	vs[1].Overload, vs[3].Overload = nil, nil
	vs[0].Overload.Served = 0 // direct answered nothing
	_, ok := findIn(Analyze(c), OverloadGoodput, "get")
	assert.False(t, ok, "one variant is no comparison")
	vs[1].Overload = &result.OverloadRun{Served: 10, Goodput: 21000}
	g = find(t, Analyze(c), OverloadGoodput)
	_, ok = g.Figure(GroupKept, GoodputVsDirect)
	assert.False(t, ok, "no ratio where direct served nothing")
}

func TestShedWaitPerPolicy(t *testing.T) {
	c := comparisonOf(t, nil, "direct", "fifo", "lifo", "adaptive")
	vs := c.Workloads[0].Variants
	vs[1].Variant.Policy, vs[2].Variant.Policy, vs[3].Variant.Policy = "reject", "reject", "drop-oldest"
	vs[0].Overload = &result.OverloadRun{Served: 10}
	vs[1].Overload = &result.OverloadRun{Served: 10, Shed: 5, ShedWaitP50: 50 * time.Millisecond, ServedWaitP50: 110 * time.Millisecond}
	vs[2].Overload = &result.OverloadRun{Served: 10, Shed: 5, ShedWaitP50: 60 * time.Millisecond, ServedWaitP50: 80 * time.Millisecond}
	vs[3].Overload = &result.OverloadRun{Served: 10, Shed: 5, ShedWaitP50: 105 * time.Millisecond, ServedWaitP50: 100 * time.Millisecond}
	w := find(t, Analyze(c), ShedWait)
	assert.Equal(t, "policy", w.By)
	f, _ := w.Figure("reject", ShedWaitP50)
	assert.Equal(t, &Interval{Lo: float64(50 * time.Millisecond), Hi: float64(60 * time.Millisecond), N: 2}, f.Interval)
	f, _ = w.Figure("drop-oldest", ServedWaitP50)
	assert.Equal(t, float64(100*time.Millisecond), f.Interval.Lo)
	vs[3].Overload.Shed = 0 // one policy left: per variant
	w = find(t, Analyze(c), ShedWait)
	assert.Equal(t, "variant", w.By)
	_, ok := w.Figure("fifo", ShedWaitP50)
	assert.True(t, ok)
	for _, v := range vs {
		v.Overload.Shed = 0
	}
	_, ok = findIn(Analyze(c), ShedWait, "get")
	assert.False(t, ok, "nothing shed, nothing to say")
}

// TestConcurrencyBoundAndProfileGrowth: a 2-worker pool over a 1 ms store
// serves about 2,000 req/s whatever its CPU; the finding says so instead
// of blaming what its CPU profile grows in. A 64-worker pool, whose bound
// lies above what direct reached, keeps the profile's finding.
func TestConcurrencyBoundAndProfileGrowth(t *testing.T) {
	c := comparisonOf(t, map[string][]float64{
		"direct":          {60000, 61000, 59000, 60000, 61000, 59000},
		"fifo workers=2":  {1690, 1700, 1710, 1690, 1700, 1710},
		"fifo workers=64": {50000, 50500, 49500, 50000, 50500, 49500},
	}, "direct", "fifo workers=2", "fifo workers=64")
	wr := c.Workloads[0]
	for _, v := range wr.Variants {
		v.Variant.IODelay = time.Millisecond
	}
	wr.Variants[1].Variant.Workers, wr.Variants[2].Variant.Workers = 2, 64
	c.ProfileWorkload = "get"
	diff := "      flat  flat%   sum%        cum   cum%\n     250ms  2.10%  2.10%      250ms  2.10%  runtime.futex\n"
	for _, name := range []string{"direct", "fifo workers=2", "fifo workers=64"} {
		c.Profiles = append(c.Profiles, &result.ProfileSet{Variant: name, Diffs: map[string]string{"cpu": diff}})
	}
	a := Analyze(c)
	bound := find(t, a, ConcurrencyBound)
	assert.Equal(t, []string{"fifo workers=2"}, bound.Variants, "64 workers could serve 64,000 req/s, more than direct reached")
	assert.Equal(t, 2000.0, bound.Value("fifo workers=2", ConcurrencyLimit))
	assert.InDelta(t, 85.0, bound.Value("fifo workers=2", ShareOfBound), 1e-9)
	grew := kindsIn(a, ProfileGrowth)
	require.Len(t, grew, 1, "no CPU blame for a pool bound by its workers")
	assert.Equal(t, []string{"fifo workers=64"}, grew[0].Variants)
	top, _ := grew[0].Figure("fifo workers=64", TopFunction)
	assert.Equal(t, "runtime.futex", top.Text)
	assert.Equal(t, 2.1, top.Value)
	assert.InDelta(t, 100*(1-50000.0/60000), grew[0].Value("fifo workers=64", Loss), 0.1, "from the paired ratio's median")

	// Three repeats bound no interval: nothing is below direct, and no
	// profile is blamed for a loss that is not measurable.
	for _, v := range wr.Variants {
		v.Sat = v.Sat[:3]
	}
	assert.Empty(t, kindsIn(Analyze(c), ProfileGrowth))

	wr.Variants[2].Variant.Limit = "gradient2"
	assert.Zero(t, concurrencyBound(wr.Variants[2]), "an adaptive limit moves the W/delay bound: the finding does not apply")
}

// TestCPUPerShed: the 503's CPU is what the overload step cost beyond its
// served requests at a served request's cost each, per 503.
func TestCPUPerShed(t *testing.T) {
	o := &result.OverloadRun{ServerCPU: 10 * time.Second, ProbeCPUPerRequest: 20 * time.Microsecond, Served: 400_000, Shed: 200_000}
	d, ok := cpuPerShed(o)
	require.True(t, ok)
	assert.Equal(t, 10*time.Microsecond, d, "(10 s − 400,000 × 20 µs) ÷ 200,000")
	o.ServerCPU = 7 * time.Second // serving grew cheaper under load
	d, _ = cpuPerShed(o)
	assert.Equal(t, -5*time.Microsecond, d, "derived, so it can come out negative; not hidden")
	for _, none := range []*result.OverloadRun{
		{ServerCPU: time.Second, ProbeCPUPerRequest: time.Microsecond, Served: 10},             // nothing shed
		{ServerCPU: time.Second, Served: 10, Shed: 5},                                          // no probe figure
		{ProbeCPUPerRequest: time.Microsecond, Served: 10, Shed: 5},                            // no step figure
		{ServerCPUPerRequest: time.Microsecond, ProbeCPUPerRequest: time.Microsecond, Shed: 5}, // no step CPU recorded
		{ServerCPU: time.Second, ProbeCPUPerRequest: time.Microsecond, Served: 990, Shed: 10},  // 1 % shed: the error would swamp it
	} {
		_, ok := cpuPerShed(none)
		assert.False(t, ok, "%+v", none)
	}

	c := comparisonOf(t, nil, "direct", "fifo", "lifo")
	vs := c.Workloads[0].Variants
	vs[0].Overload = &result.OverloadRun{Served: 10, ServerCPU: time.Second, ProbeCPUPerRequest: 12 * time.Microsecond}
	vs[1].Overload = &result.OverloadRun{ServerCPU: 10 * time.Second, ProbeCPUPerRequest: 20 * time.Microsecond, Served: 400_000, Shed: 200_000}
	vs[2].Overload = &result.OverloadRun{ServerCPU: 10 * time.Second, ProbeCPUPerRequest: 20 * time.Microsecond, Served: 450_000, Shed: 100_000}
	a := Analyze(c)
	fifo := a.Workloads[0].Variant("fifo").Overload
	assert.True(t, fifo.ShedCost)
	assert.Equal(t, 10*time.Microsecond, fifo.CPUPerShed)
	assert.InDelta(t, 0.5, fifo.ShedCostRatio, 1e-9)
	assert.False(t, a.Workloads[0].Variant("direct").Overload.ShedCost, "direct shed nothing")
	cost := find(t, a, ShedCost)
	assert.Equal(t, Derived, cost.Verdict)
	assert.Equal(t, []string{"fifo", "lifo"}, cost.Variants, "the lowest, then the highest")
	whole, _ := cost.Figure("", ShedCostRatio)
	assert.Equal(t, 2, whole.Interval.N)
	assert.InDelta(t, 0.5, whole.Interval.Lo, 1e-9)

	// With the variant's closed-loop round at full load (it shed nothing),
	// its CPU per request there is the reference, not the half-load
	// probe's: 10 s − 400,000 × 16 µs over 200,000 503s.
	o = &result.OverloadRun{ServerCPU: 10 * time.Second, ProbeCPUPerRequest: 20 * time.Microsecond, FullLoadCPUPerRequest: 16 * time.Microsecond,
		Served: 400_000, Shed: 200_000}
	d, _ = cpuPerShed(o)
	assert.Equal(t, 18*time.Microsecond, d)
	assert.Equal(t, 16*time.Microsecond, servedCPU(o), "taken from its closed loop")
}

// TestDefaultsTargets: the pools at kvserver's defaults against direct's
// saturation and goodput, with their targets decided from them.
func TestDefaultsTargets(t *testing.T) {
	c := comparisonOf(t, nil, "direct", "fifo", "lifo")
	wr := c.Workloads[0]
	wr.BaseRate = 40000
	wr.Variants = append(wr.Variants, &result.VariantResult{Name: "lifo/reject cap=1024",
		Variant:  plan.Variant{Pool: "lifo", Policy: "reject", Cap: 1024, CapSet: true, QueueTimeoutSet: true},
		Overload: &result.OverloadRun{Served: 10, Goodput: 1000}})
	wr.Variants[0].Overload = &result.OverloadRun{Served: 10, Goodput: 32000, ServedP99Uncorrected: 120 * time.Millisecond}
	wr.Variants[1].Overload = &result.OverloadRun{Served: 10, Goodput: 22000, ServedP99Uncorrected: 40 * time.Millisecond}
	wr.Variants[2].Overload = &result.OverloadRun{Served: 10, Goodput: 37000, ServedP99Uncorrected: 42 * time.Millisecond}
	f := find(t, Analyze(c), DefaultsTargets)
	assert.Equal(t, []string{"fifo", "lifo"}, f.Variants, "only the defaults")
	assert.InDelta(t, 0.55, f.Value("fifo", GoodputVsSat), 1e-9)
	assert.InDelta(t, 22000.0/32000, f.Value("fifo", GoodputVsDirect), 1e-9)
	verdicts := func(name Measure) map[string]Verdict {
		m := map[string]Verdict{}
		for _, x := range f.All(name) {
			m[x.Of] = x.Verdict
		}
		return m
	}
	assert.Equal(t, map[string]Verdict{"": Missed}, verdicts(Floor))
	assert.Equal(t, map[string]Verdict{"fifo": Missed, "lifo": Met}, verdicts(GoodputVsSat), "fifo under the floor")
	assert.Equal(t, map[string]Verdict{"": Met}, verdicts(Best))
	assert.Equal(t, map[string]Verdict{"fifo": "", "lifo": Met}, verdicts(ServedP99FromSend), "lifo is the best")
	assert.Equal(t, Missed, f.Verdict)
	assert.Equal(t, float64(120*time.Millisecond), f.Value("", DirectServedP99FromSend))

	wr.Variants[1].Overload.Goodput = 30000
	wr.Variants[2].Overload.ServedP99Uncorrected = 130 * time.Millisecond
	f = find(t, Analyze(c), DefaultsTargets)
	assert.Equal(t, map[string]Verdict{"": Met}, verdicts(Floor))
	lowest := f.All(Lowest)
	require.Len(t, lowest, 1)
	assert.Equal(t, "fifo", lowest[0].Of)
	assert.Equal(t, map[string]Verdict{"": Missed}, verdicts(Best), "lifo's p99 is above direct's")
	assert.Equal(t, "lifo", f.All(Highest)[0].Of)
}

// TestOverloadAgainstALowerBound: where direct's saturation, which sets
// the overload rate, is loader-bound, the findings say the step asked at
// most its factor, and ratios to it are upper bounds.
func TestOverloadAgainstALowerBound(t *testing.T) {
	c := comparisonOf(t, map[string][]float64{"direct": {40000}}, "direct", "fifo")
	wr := c.Workloads[0]
	wr.Variants[0].Sat[0].LoaderBound = true
	wr.BaseRate, wr.BaseLowerBound = 40000, true
	wr.Variants[0].Overload = &result.OverloadRun{Asked: 80000, Served: 10, Goodput: 38000}
	wr.Variants[1].Overload = &result.OverloadRun{Asked: 80000, Served: 10, Goodput: 30000}
	a := Analyze(c)
	assert.Equal(t, 2.0, find(t, a, OverloadLowerBound).Value("", Factor))
	sat, _ := find(t, a, DefaultsTargets).Figure("", DirectSaturation)
	assert.Equal(t, LowerBound, sat.Verdict)

	wr.BaseLowerBound = false
	a = Analyze(c)
	assert.NotContains(t, kinds(a), OverloadLowerBound)
	sat, _ = find(t, a, DefaultsTargets).Figure("", DirectSaturation)
	assert.Empty(t, sat.Verdict)
}

// TestCrossCheck: direct's saturation against its closed loop.
func TestCrossCheck(t *testing.T) {
	c := comparisonOf(t, map[string][]float64{"direct": {40000}}, "direct")
	v := c.Workloads[0].Variants[0]
	v.Closed = &result.ClosedRun{Conns: 64, Rounds: []result.ClosedRound{{Rate: 39000}, {Rate: 41000}, {Rate: 42000}}}
	f := func(want Verdict, difference float64) Finding {
		t.Helper()
		got := kindsIn(Analyze(c), CrossCheck)
		require.Len(t, got, 1)
		assert.Equal(t, want, got[0].Verdict)
		assert.InDelta(t, difference, got[0].Value("direct", Difference), 0.5)
		return got[0]
	}
	within := f(Within, 0)
	cl, _ := within.Figure("direct", ClosedRate)
	assert.Equal(t, Figure{Of: "direct", Name: ClosedRate, Value: 41000, Interval: &Interval{Lo: 39000, Hi: 42000, N: 3}}, cl)
	assert.Equal(t, 64.0, within.Value("direct", Conns))
	v.Sat[0].Rate = 30000
	f(Below, 27)
	v.Sat[0].Rate = 50000
	f(Above, 22)
	v.Closed.Rounds[1].LoaderBound, v.Closed.Rounds[1].Why = true, "the loader used 95% of its 1 CPU"
	assert.Equal(t, "the loader used 95% of its 1 CPU", f(ClosedLowerBound, 0).Note)
	v.Sat[0].LoaderBound = true
	f(SatLowerBound, 0)
	v.Closed = nil
	assert.Empty(t, kindsIn(Analyze(c), CrossCheck))
}

// TestCrossCheckAccounts: where both sides' CPU was measured, the
// cross-check carries what accounts for open ÷ closed: CPU per request and
// how busy kvserver's CPUs were, each way (medians; the open side from
// the validating runs that held, a failed validation's share ignored).
func TestCrossCheckAccounts(t *testing.T) {
	c := comparisonOf(t, map[string][]float64{"direct": {40000, 41000, 42000}}, "direct")
	v := c.Workloads[0].Variants[0]
	for i := range v.Sat {
		v.Sat[i].ServerCPUPerRequest = time.Duration(20+i) * time.Microsecond
		v.Sat[i].Curve = []result.CurvePoint{
			{Phase: "validate", Pass: false, Server: cpuset.Use{Share: 0.99}},
			{Phase: "validate", Pass: true, Server: cpuset.Use{Share: 0.84 + 0.01*float64(i)}},
		}
	}
	v.Closed = &result.ClosedRun{Conns: 64, Rounds: []result.ClosedRound{
		{Rate: 50000, ServerCPUPerRequest: 19 * time.Microsecond, Server: cpuset.Use{Share: 0.99}},
		{Rate: 52000, ServerCPUPerRequest: 18 * time.Microsecond, Server: cpuset.Use{Share: 1.0}},
		{Rate: 51000, ServerCPUPerRequest: 20 * time.Microsecond, Server: cpuset.Use{Share: 0.98}},
	}}
	f := find(t, Analyze(c), CrossCheck)
	assert.Equal(t, Below, f.Verdict)
	assert.Equal(t, float64(21*time.Microsecond), f.Value("direct", CPUPerRequest))
	assert.Equal(t, float64(19*time.Microsecond), f.Value("direct", ClosedCPUPerRequest))
	assert.InDelta(t, 85, f.Value("direct", ServerBusy), 1e-9)
	assert.InDelta(t, 99, f.Value("direct", ClosedServerBusy), 1e-9)
	// Open ÷ closed 41,000 ÷ 51,000 = utilisation 85/99 × cost 19/21 × the rest.
	open, ok := f.Figure("direct", OpenOverClosed)
	require.True(t, ok)
	assert.InDelta(t, 41000.0/51000, open.Value, 1e-9)
	assert.Equal(t, IdleMost, open.Verdict, "utilisation 0.86 is the smaller factor against cost 0.90")
	assert.InDelta(t, 41000.0/51000/(85.0/99*19/21), f.Value("direct", Unexplained), 1e-9)
	for i := range v.Sat {
		v.Sat[i].ServerCPUPerRequest = 30 * time.Microsecond // cost 19/30: the smaller
	}
	open, _ = find(t, Analyze(c), CrossCheck).Figure("direct", OpenOverClosed)
	assert.Equal(t, CostMost, open.Verdict)

	for i := range v.Closed.Rounds {
		v.Closed.Rounds[i].Server = cpuset.Unknown
	}
	_, ok = find(t, Analyze(c), CrossCheck).Figure("direct", ServerBusy)
	assert.False(t, ok, "without the closed loop's share nothing is accounted for")
}

// TestFixedErrors: a fixed step that failed more than the searches allow
// is named, its percentiles being partly quick 503s.
func TestFixedErrors(t *testing.T) {
	c := comparisonOf(t, map[string][]float64{"direct": {27000}}, "direct", "fifo")
	c.Workloads[0].Variants[1].Fixed = &result.FixedRun{ErrorRate: 0.0065}
	f := find(t, Analyze(c), FixedErrors)
	assert.Equal(t, []string{"fifo"}, f.Variants)
	assert.Equal(t, 0.0065, f.Value("fifo", ErrorRate))
	assert.False(t, Analyze(c).Workloads[0].OnlyBaseRate, "a fixed step: the results table")
	c.Workloads[0].Variants[1].Fixed.ErrorRate = c.Criteria.MaxErrorRate / 2
	assert.Empty(t, kindsIn(Analyze(c), FixedErrors), "under the search's own limit: no finding")
}

func TestEstimates(t *testing.T) {
	assert.Equal(t, Estimate{Median: 2, Interval: Interval{Lo: 1, Hi: 3, N: 3}}, estimateOf([]float64{3, 1, 2}))
	assert.Equal(t, 2.5, Median([]float64{4, 1, 2, 3}))
	assert.Equal(t, 1.5, estimateOf([]float64{4, 1, 2}).HalfSpread())
	assert.Zero(t, Median(nil))
	assert.Equal(t, 0.5, ratio(1, 2))
	assert.True(t, math.IsNaN(ratio(1, 0)), "no ratio without a base")
}

// TestProbesStopped: the analysis says the recovery probes stopped early
// only where one did at a normal second; all probes taken, or a run that
// ended on a slow probe (a failed one after it), say nothing.
func TestProbesStopped(t *testing.T) {
	c := comparisonOf(t, map[string][]float64{"direct": {1000}, "fifo": {1000}}, "direct", "fifo")
	n := c.Options.StepTiming().RecoverProbes
	require.Greater(t, n, 1)
	baseline := time.Millisecond // normal: up to 6 ms
	slow := make([]time.Duration, n)
	for i := range slow {
		slow[i] = time.Second
	}
	c.Workloads[0].Variants[0].Overload = &result.OverloadRun{BaselineP99: baseline, RecoveryP99: slow}
	c.Workloads[0].Variants[1].Overload = &result.OverloadRun{BaselineP99: baseline, RecoveryP99: slow}
	assert.False(t, Analyze(c).ProbesStopped, "every probe taken")

	c.Workloads[0].Variants[1].Overload.RecoveryP99 = []time.Duration{time.Second}
	assert.False(t, Analyze(c).ProbesStopped, "ended on a slow probe: a failed one, not a stop")

	c.Workloads[0].Variants[1].Overload.RecoveryP99 = []time.Duration{time.Second, 3 * time.Millisecond}
	assert.True(t, Analyze(c).ProbesStopped)
}

// TestLoaderKept counts the steps whose loader kept up.
func TestLoaderKept(t *testing.T) {
	c := comparisonOf(t, map[string][]float64{"direct": {40000}}, "direct")
	c.Loader = []result.LoaderCheck{{KeptUp: true}, {Backlog: "grew"}, {}, {KeptUp: true}}
	assert.Equal(t, 2, Analyze(c).LoaderKept)
}

// TestOverloadBarsSeries: one configuration besides direct makes one
// series; several make one each, direct's its own, with no bar where a
// pool has no such series.
func TestOverloadBarsSeries(t *testing.T) {
	assert.Nil(t, overloadBars(&result.WorkloadResult{Variants: []*result.VariantResult{{Variant: plan.Variant{Pool: "direct"}}}}), "no overload step: no bars")
	b := overloadBars(&result.WorkloadResult{Variants: []*result.VariantResult{
		{Variant: plan.Variant{Pool: "direct"}, Overload: &result.OverloadRun{Goodput: 100, ServedP99: 3 * time.Millisecond}},
		{Variant: plan.Variant{Pool: "fifo"}, Overload: &result.OverloadRun{Goodput: 90}},
	}})
	assert.Equal(t, []string{"direct", "fifo"}, b.Groups)
	assert.Equal(t, []string{"at each pool's default policy"}, b.Series, "one policy: one series")
	assert.Equal(t, [][]float64{{100, 90}}, b.Goodput)
	assert.Equal(t, [][]float64{{3, 0}}, b.P99, "in ms")

	b = overloadBars(&result.WorkloadResult{Variants: []*result.VariantResult{
		{Variant: plan.Variant{Pool: "direct"}, Overload: &result.OverloadRun{Goodput: 100}},
		{Variant: plan.Variant{Pool: "fifo", Policy: "reject"}, Overload: &result.OverloadRun{Goodput: 80}},
		{Variant: plan.Variant{Pool: "fifo", Policy: "block"}, Overload: &result.OverloadRun{Goodput: 70}},
	}})
	assert.Equal(t, []string{"direct", "fifo"}, b.Groups)
	assert.Equal(t, []string{"direct (no queue)", "reject", "block"}, b.Series)
	assert.Equal(t, 100.0, b.Goodput[0][0])
	assert.True(t, math.IsNaN(b.Goodput[0][1]), "direct's series has no fifo bar")
	assert.Equal(t, 80.0, b.Goodput[1][1])
	assert.Equal(t, 70.0, b.Goodput[2][1])
}

// TestOverloadTimelineHasGapsForUnsentSeconds: a second of the overload
// step in which no request was sent is a gap (NaN); the recovery probes
// follow the step, one point each.
func TestOverloadTimelineHasGapsForUnsentSeconds(t *testing.T) {
	wr := &result.WorkloadResult{Variants: []*result.VariantResult{{Name: "lifo", Variant: plan.Variant{Pool: "lifo"}, Overload: &result.OverloadRun{
		PerSecond:   []result.SecondPoint{{Second: 0, P99: time.Millisecond}, {Second: 1, P99: 2 * time.Millisecond}},
		RecoveryP99: []time.Duration{time.Millisecond},
	}}}}
	tm := plan.QuickTiming()
	tm.Overload = 3 * time.Second
	lines := overloadTimeline(wr, tm)
	require.Len(t, lines, 1)
	assert.Equal(t, []float64{0.5, 1.5, 2.5, 3 + 0.5*tm.ProbeLength.Seconds()}, lines[0].X)
	assert.Equal(t, []float64{1, 2}, lines[0].Y[:2])
	assert.True(t, math.IsNaN(lines[0].Y[2]), "second 2 had no request sent: a gap")
	assert.Equal(t, 1.0, lines[0].Y[3], "the recovery probe after the overload")
}
