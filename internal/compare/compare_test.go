package compare

import (
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/kvpool/kvpool/internal/compare/chart"
	"github.com/kvpool/kvpool/internal/latency"
)

func TestPresetPlans(t *testing.T) {
	f := func(preset string, wantVariants int, wantFirst []string) {
		t.Helper()
		o := DefaultOptions()
		o.Preset = preset
		require.NoError(t, o.Validate())
		p, err := newPlan(&o, 8)
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
	f("queues", 6, []string{"direct", "fifo", "lifo", "msqueue", "multiqueue", "adaptive"})
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
	p, err := newPlan(&o, 8)
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

// TestPresetVariantsOfIssue20: the policy variants name their bound (a
// queue at kvserver's default -cap never fills) and turn shedding by age
// off, as the seeds ran; the defaults pass no pool flag at all; the limit
// variants run on fifo and lifo; -execs multiplies the queueing variants
// but not direct or the limits.
func TestPresetVariantsOfIssue20(t *testing.T) {
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
		p, err := newPlan(&o, 8)
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
	p, err := newPlan(&o, 8)
	require.NoError(t, err)
	assert.Equal(t, []string{"-pool", "msqueue", "-cap", "-1"}, find(p.Variants, "msqueue unbounded").Args(), "unbounded msqueue as before")

	o = DefaultOptions()
	o.Preset, o.Execs, o.Limits, o.Pools = "queues", []string{"handler", "worker"}, nil, []string{"lifo"}
	p, err = newPlan(&o, 8)
	require.NoError(t, err)
	var names []string
	for _, v := range p.Variants {
		names = append(names, v.Name())
	}
	assert.Equal(t, []string{"direct", "lifo exec=handler", "lifo exec=worker"}, names)
	assert.Equal(t, []string{"-pool", "lifo", "-exec", "worker"}, p.Variants[2].Args())

	o = DefaultOptions()
	o.Preset, o.Execs, o.Limits, o.Pools, o.Policies = "policies", []string{"worker"}, []string{"aimd"}, []string{"lifo"}, []string{"block"}
	p, err = newPlan(&o, 8)
	require.NoError(t, err)
	names = nil
	for _, v := range p.Variants {
		names = append(names, v.Name())
	}
	assert.Equal(t, []string{"direct", "lifo exec=worker", "lifo/block cap=1024 exec=worker", "lifo limit=aimd"}, names,
		"a limit adapts -exec handler's slots only: not multiplied by -execs")

	o = DefaultOptions()
	o.Preset, o.Limits = "policies", []string{}
	p, err = newPlan(&o, 8)
	require.NoError(t, err)
	assert.Len(t, p.Variants, 26, "-limits none")

	o = DefaultOptions()
	o.Preset, o.Pools, o.Workers = "slow-backend", []string{"lifo"}, []int{2}
	p, err = newPlan(&o, 8)
	require.NoError(t, err)
	v := find(p.Variants, "lifo limit=gradient2")
	assert.Equal(t, time.Millisecond, v.IODelay, "a limit variant behind the slow store too")
	assert.Zero(t, concurrencyBound(v), "an adaptive limit moves the W/delay bound: the finding does not apply")
	assert.Equal(t, 2000.0, concurrencyBound(find(p.Variants, "lifo workers=2")))
}

func TestPresetDetails(t *testing.T) {
	o := DefaultOptions()
	o.Preset = "overload"
	require.NoError(t, o.Validate())
	p, err := newPlan(&o, 8)
	require.NoError(t, err)
	assert.Equal(t, 10.0, p.OverloadFactor, "the overload preset asks for 10x, as make overload did")

	o = DefaultOptions()
	o.Preset, o.Quick = "queues", true
	o.ApplyDefaults(false, false)
	require.NoError(t, o.Validate())
	p, err = newPlan(&o, 8)
	require.NoError(t, err)
	assert.Equal(t, []string{"get"}, p.Workloads, "quick runs one workload")
	assert.Equal(t, uint64(quickKeys), o.Keys)
	assert.Equal(t, 1, o.Repeat)
	assert.Equal(t, 2.0, p.OverloadFactor)

	o = DefaultOptions()
	o.Preset = "overload"
	o.ApplyDefaults(false, false)
	assert.Equal(t, uint64(quickKeys), o.Keys, "the overload preset's store, as overload.sh's")
	assert.Equal(t, 1, o.Repeat, "one search sets the overload rate")
	assert.Equal(t, overloadPresetDuration, o.StepTiming().Overload)
	o = DefaultOptions()
	o.Preset, o.Keys, o.Repeat = "overload", 5000, 3
	o.ApplyDefaults(true, true)
	assert.Equal(t, uint64(5000), o.Keys, "a -keys given wins")
	assert.Equal(t, 3, o.Repeat, "a -repeat given wins")

	o = DefaultOptions()
	o.Preset, o.Pools, o.Limits = "slow-backend", []string{"lifo"}, []string{}
	o.IODelay, o.IODelayDist, o.Workers = 2*time.Millisecond, "exp", []int{4}
	require.NoError(t, o.Validate())
	p, err = newPlan(&o, 8)
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
	assert.Equal(t, "fifo cap=64 workers=8", poolLabel(v))
	assert.Equal(t, "-", Variant{Pool: "direct"}.PolicyLabel())
	assert.Equal(t, "default", Variant{Pool: "lifo"}.PolicyLabel())
	assert.Equal(t, "fifo cap=0", Variant{Pool: "fifo", CapSet: true}.Name(), "cap 0 (hand-off) is a capacity, not the default")
}

// TestReadAnswersSplitsServedFromShed writes a results.bin as the loader
// does and checks that shed 503s are kept out of the served p99, that
// latency is corrected from the intended send, and the per-second series.
func TestReadAnswersSplitsServedFromShed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.bin")
	f, err := os.Create(path)
	require.NoError(t, err)
	enc := vegeta.NewEncoder(f)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const rate = 100.0 // request seq is due at seq × 10 ms
	put := func(seq uint64, sentLate, lat time.Duration, code uint16) {
		intended := time.Duration(seq) * 10 * time.Millisecond
		r := vegeta.Result{Seq: seq, Code: code, Timestamp: start.Add(intended + sentLate), Latency: lat}
		require.NoError(t, enc.Encode(&r))
	}
	// Second 0: 100 served in 1 ms, sent on time.
	for seq := uint64(0); seq < 100; seq++ {
		put(seq, 0, time.Millisecond, 200)
	}
	// Second 1: 50 served in 1 ms but sent 40 ms late (corrected 41 ms),
	// 40 shed after 1 µs, 5 timeouts, 5 404s.
	for seq := uint64(100); seq < 200; seq++ {
		switch {
		case seq < 150:
			put(seq, 40*time.Millisecond, time.Millisecond, 200)
		case seq < 190:
			put(seq, 0, time.Microsecond, 503)
		case seq < 195:
			put(seq, 0, 2*time.Second, 0)
		default:
			put(seq, 0, time.Millisecond, 404)
		}
	}
	require.NoError(t, f.Close())

	a, err := readAnswers(path, start, rate)
	require.NoError(t, err)
	assert.Equal(t, int64(155), a.Served, "2xx and 404")
	assert.Equal(t, int64(40), a.Shed)
	assert.Equal(t, int64(5), a.Timeouts)
	assert.Zero(t, a.Other)
	p99 := time.Duration(a.ServedCorrected.ValueAtPercentile(99)) * time.Microsecond
	assert.InDelta(t, 41*time.Millisecond, p99, float64(time.Millisecond), "served p99 is corrected from the intended send")
	assert.Equal(t, int64(1000), a.ServedUncorrected.ValueAtPercentile(99), "uncorrected: from the actual send, µs")
	assert.Equal(t, int64(1), a.ShedWait.Max(), "shed requests waited 1 µs")
	require.Len(t, a.PerSecond, 2)
	assert.Equal(t, SecondPoint{Second: 0, P99: time.Millisecond, Served: 100}, a.PerSecond[0])
	assert.Equal(t, 1, a.PerSecond[1].Second)
	assert.Equal(t, int64(55), a.PerSecond[1].Served)
	assert.Equal(t, int64(40), a.PerSecond[1].Shed)
}

// comparisonOf builds a Comparison with one workload whose variants have
// the given saturation runs.
func comparisonOf(sat map[string][]float64, order ...string) *Comparison {
	wr := &WorkloadResult{Workload: "get"}
	for _, name := range order {
		v := &VariantResult{Variant: Variant{Pool: name}, Name: name}
		for i, r := range sat[name] {
			v.Sat = append(v.Sat, SatRun{Repeat: i + 1, Rate: r})
		}
		wr.Variants = append(wr.Variants, v)
	}
	o := DefaultOptions()
	return &Comparison{Preset: "queues", Options: o, Workloads: []*WorkloadResult{wr}}
}

func TestFindingsStateLeadsAndTies(t *testing.T) {
	c := comparisonOf(map[string][]float64{
		"direct": {40000, 41000, 40500},
		"fifo":   {30000, 31000, 30500},
		"lifo":   {35000, 36000, 35500},
	}, "direct", "fifo", "lifo")
	text := strings.Join(findings(c), "\n")
	assert.Contains(t, text, "**direct saturates highest**")
	assert.Contains(t, text, "saturates lower than direct beyond the spread: fifo, lifo")

	c = comparisonOf(map[string][]float64{
		"direct": {40000, 42000, 41000},
		"lifo":   {41500, 43000, 39000},
	}, "direct", "lifo")
	text = strings.Join(findings(c), "\n")
	assert.Contains(t, text, "no pool saturates clearly highest")
	assert.NotContains(t, text, "saturates highest**", "overlapping ranges are a tie, never a winner")
	assert.Contains(t, text, "not distinguishable from direct's saturation")

	c = comparisonOf(map[string][]float64{"direct": {40000}, "lifo": {30000}}, "direct", "lifo")
	text = strings.Join(findings(c), "\n")
	assert.Contains(t, text, "tie: one run", "one run has no spread: no winner")

	c = comparisonOf(map[string][]float64{"direct": {40000, 40000}, "lifo": {30000, 31000}}, "direct", "lifo")
	c.Workloads[0].Variants[0].Sat[1].HitMax = true
	text = strings.Join(findings(c), "\n")
	assert.Contains(t, text, "direct passed the search's highest rate")
	assert.NotContains(t, text, "saturates highest**", "a floor is not a saturation")
}

func TestFindingsUnderOverload(t *testing.T) {
	c := comparisonOf(nil, "direct", "fifo", "lifo")
	vs := c.Workloads[0].Variants
	vs[0].Overload = &OverloadRun{Served: 10, ServedP99: 300 * time.Millisecond, Verdict: "PASS"}
	vs[1].Overload = &OverloadRun{Served: 10, ServedP99: 20 * time.Millisecond, Verdict: "FAIL: exit 1 on SIGTERM"}
	vs[2].Overload = &OverloadRun{Served: 10, ServedP99: 50 * time.Millisecond, Verdict: "PASS"}
	text := strings.Join(findings(c), "\n")
	assert.Contains(t, text, "within the SLO (100ms)**: fifo (20.00ms), lifo (50.00ms); above it: direct (300.00ms)")
	assert.NotContains(t, text, "the loader sent only part", "only where the loader fell behind")
	assert.Contains(t, text, "failed the degradation checks: fifo (exit 1 on SIGTERM)")

	assert.NotContains(t, text, "every variant stayed alive", "not with a failure")

	vs[1].Overload.ServedP99, vs[2].Overload.ServedP99 = time.Second, time.Second
	vs[1].Overload.Verdict = "exception: p99 not normal (≤ 5 ms) within 5s"
	text = strings.Join(findings(c), "\n")
	assert.Contains(t, text, "no variant kept the corrected p99 of served requests under the SLO")
	assert.Contains(t, text, "measured but not judged: fifo (p99 not normal")
	assert.NotContains(t, text, "every variant stayed alive", "not with an exception that has reasons")

	vs[1].Overload.Verdict = "exception (unbounded)"
	text = strings.Join(findings(c), "\n")
	assert.Contains(t, text, "every variant stayed alive")

	// A loader that fell behind: the p99 from the send is given beside.
	vs[2].Overload.Asked, vs[2].Overload.Planned, vs[2].Overload.Sent = 1000, 1000, 400
	vs[0].Overload.ServedP99Uncorrected, vs[1].Overload.ServedP99Uncorrected = time.Second, time.Second
	vs[2].Overload.ServedP99Uncorrected = 30 * time.Millisecond
	text = strings.Join(findings(c), "\n")
	assert.Contains(t, text, "the loader sent only part of what was planned (lifo 40 %)")
	assert.Contains(t, text, "from the actual send, served p99 within the SLO (100ms): lifo (30.00ms)")
}

func TestGoodputFindingGroupsBySheddingNotByPolicy(t *testing.T) {
	c := comparisonOf(nil, "direct", "fifo", "lifo", "adaptive")
	vs := c.Workloads[0].Variants
	vs[0].Overload = &OverloadRun{Served: 10, Goodput: 20000}
	vs[1].Overload = &OverloadRun{Served: 10, Shed: 8, ShedPct: 40, Goodput: 18000}
	vs[2].Overload = &OverloadRun{Served: 10, Goodput: 26000}
	vs[3].Overload = &OverloadRun{Served: 10, Shed: 2, ShedPct: 17.5, Goodput: 15000}
	assert.Equal(t, "`get` under overload, goodput (one run each: read differences of a few per cent as noise): "+
		"the variants that shed nothing served 20,000–26,000 req/s (1.00–1.30× direct): direct, lifo; "+
		"those that shed 503s (17.5–40.0 % of what they were sent) served 15,000–18,000 req/s (0.75–0.90× direct): fifo, adaptive.",
		goodputFinding(c.Workloads[0]))

	vs[1].Overload, vs[3].Overload = nil, nil
	vs[0].Overload.Served = 0 // direct answered nothing: no ratios
	assert.Equal(t, "", goodputFinding(c.Workloads[0]), "one variant is no comparison")
	vs[0].Overload.Served = 10
	vs[2].Overload.Shed, vs[2].Overload.ShedPct = 3, 12
	assert.Equal(t, "`get` under overload, goodput (one run each: read differences of a few per cent as noise): "+
		"the variants that shed nothing served 20,000 req/s (1.00× direct): direct; "+
		"those that shed 503s (12.0 % of what they were sent) served 26,000 req/s (1.30× direct): lifo.",
		goodputFinding(c.Workloads[0]), "a group of one has a value, not a range")
	vs[0].Overload.Served = 0
	vs[2].Overload.Shed, vs[2].Overload.ShedPct = 0, 0
	vs[1].Overload = &OverloadRun{Served: 10, Goodput: 21000}
	assert.Equal(t, "`get` under overload, goodput (one run each: read differences of a few per cent as noise): "+
		"the variants that shed nothing served 21,000–26,000 req/s: fifo, lifo.", goodputFinding(c.Workloads[0]))
}

func TestShedWaitFindingPerPolicy(t *testing.T) {
	c := comparisonOf(nil, "direct", "fifo", "lifo", "adaptive")
	vs := c.Workloads[0].Variants
	vs[1].Variant.Policy, vs[2].Variant.Policy, vs[3].Variant.Policy = "reject", "reject", "drop-oldest"
	vs[0].Overload = &OverloadRun{Served: 10}
	vs[1].Overload = &OverloadRun{Served: 10, Shed: 5, ShedWaitP50: 50 * time.Millisecond, ServedWaitP50: 110 * time.Millisecond}
	vs[2].Overload = &OverloadRun{Served: 10, Shed: 5, ShedWaitP50: 60 * time.Millisecond, ServedWaitP50: 80 * time.Millisecond}
	vs[3].Overload = &OverloadRun{Served: 10, Shed: 5, ShedWaitP50: 105 * time.Millisecond, ServedWaitP50: 100 * time.Millisecond}
	assert.Equal(t, "`get` under overload, which requests were shed: the 503s had waited (p50, from the send, per policy) "+
		"reject 50.00ms–60.00ms (served: 80.00ms–110.00ms); drop-oldest 105.00ms (served: 100.00ms).", shedWaitFinding(c.Workloads[0]))
	vs[3].Overload.Shed = 0 // one policy left: per variant
	assert.Equal(t, "`get` under overload, which requests were shed: the 503s had waited (p50, from the send, per variant) "+
		"fifo 50.00ms (served: 110.00ms); lifo 60.00ms (served: 80.00ms).", shedWaitFinding(c.Workloads[0]))
	for _, v := range vs {
		v.Overload.Shed = 0
	}
	assert.Equal(t, "", shedWaitFinding(c.Workloads[0]), "nothing shed, nothing to say")
}

// TestResultsTableOnlyWhereMeasured: a preset that measures the variants
// only under overload gets direct's saturation in a sentence, not a table
// of dashes; one with fixed steps keeps its table.
func TestResultsTableOnlyWhereMeasured(t *testing.T) {
	c := comparisonOf(map[string][]float64{"direct": {26000, 27000, 38000}}, "direct", "fifo")
	c.Workloads[0].BaseRate = 27000
	c.Workloads[0].Variants[0].Sat[2].Validated = true
	c.Workloads[0].Variants[1].Overload = &OverloadRun{Asked: 54000}
	var b bytes.Buffer
	writeWorkload(&b, c, c.Workloads[0])
	assert.Contains(t, b.String(), "Direct's saturation in req/s (median ± half the spread of its searches): 27,000 ± 6,000, 1 of 3 held in validation. This preset measures the variants only under overload (below).")
	assert.NotContains(t, b.String(), "| pool | policy | saturation")

	c.Workloads[0].Variants[0].Overload = &OverloadRun{Asked: 54000}
	b.Reset()
	writeWorkload(&b, c, c.Workloads[0])
	assert.Contains(t, b.String(), "only under overload (below), asking 2× that.")

	c.Workloads[0].Variants[1].Fixed = &FixedRun{ErrorRate: 0.0065}
	b.Reset()
	writeWorkload(&b, c, c.Workloads[0])
	assert.Contains(t, b.String(), "| pool | policy | saturation")
	assert.Contains(t, b.String(), "| max | errors | server CPU/request |")
	assert.Contains(t, b.String(), "| 0.65 % | ", "a fixed step's 503s are beside its latencies, which include them")
	assert.Equal(t, []string{"`get` at the fixed rate, failed requests (503s or time-outs) of what was sent: fifo 0.65 %; their percentiles include those answers, so read a lower p99 there as shed load, not as faster service."},
		fixedErrorFindings(c.Workloads[0]))
	c.Workloads[0].Variants[1].Fixed.ErrorRate = fixedErrorShare / 2
	assert.Empty(t, fixedErrorFindings(c.Workloads[0]), "under the search's own limit: no finding")
	assert.NotContains(t, b.String(), "This preset measures the variants only under overload")
}

// TestOwnRatesForSlowBackend: in the slow-backend preset a 2-worker pool
// serves a fraction of what direct does, so its fixed step runs at 70 %
// of its own saturation, and the table says at which rate.
func TestOwnRatesForSlowBackend(t *testing.T) {
	plans := map[string]*plan{}
	for _, preset := range []string{"queues", "slow-backend"} {
		o := DefaultOptions()
		o.Preset = preset
		p, err := newPlan(&o, 8)
		require.NoError(t, err)
		plans[preset] = p
	}
	require.True(t, plans["slow-backend"].OwnRates)
	require.False(t, plans["queues"].OwnRates)

	c := comparisonOf(map[string][]float64{"direct": {60000, 64000, 62000}, "fifo": {1700, 1750, 1800}}, "direct", "fifo")
	wr := c.Workloads[0]
	wr.BaseRate = 62000
	c.Workloads[0].Variants = append(c.Workloads[0].Variants, &VariantResult{Variant: Variant{Pool: "lifo"}, Name: "lifo"})
	direct, fifo, unsearched := wr.Variants[0], wr.Variants[1], wr.Variants[2]
	assert.Equal(t, 62000.0, refRate(plans["queues"], wr, fifo), "queues: every variant at direct's")
	assert.Equal(t, 1750.0, refRate(plans["slow-backend"], wr, fifo), "slow-backend: its own median")
	assert.Equal(t, 62000.0, refRate(plans["slow-backend"], wr, direct))
	assert.Equal(t, 62000.0, refRate(plans["slow-backend"], wr, unsearched), "no search of its own: direct's")

	c.plan = plans["slow-backend"]
	direct.Fixed = &FixedRun{Asked: fixedShare * 62000}
	fifo.Fixed = &FixedRun{Asked: fixedShare * 1750}
	var b bytes.Buffer
	writeWorkload(&b, c, wr)
	text := b.String()
	assert.Contains(t, text, "at 70 % of its own saturation (the fixed rate column)")
	assert.Contains(t, text, "| fixed rate req/s | p50 |")
	assert.Contains(t, text, "|---|---|---|---|---|---|---|---|---|---|---|---|\n", "one rule cell per column")
	assert.Contains(t, text, "| 1,225 | ", "fifo's own rate")
	assert.Contains(t, text, "| 43,400 | ", "direct's")
	assert.Contains(t, runSummary(c), "a fixed-rate step of 20s at 70 % of each variant's own saturation")

	c.plan = plans["queues"]
	b.Reset()
	writeWorkload(&b, c, wr)
	assert.NotContains(t, b.String(), "fixed rate req/s")
	assert.Contains(t, b.String(), "fixed-rate step at 43,400 req/s")
}

// TestConcurrencyBoundFinding: a 2-worker pool over a 1 ms store serves
// about 2,000 req/s whatever its CPU; the finding says so instead of
// blaming what its CPU profile grows in. A 64-worker pool, whose bound
// lies above what direct reached, keeps the profile's finding.
func TestConcurrencyBoundFinding(t *testing.T) {
	c := comparisonOf(map[string][]float64{
		"direct": {60000, 61000, 59000}, "fifo workers=2": {1690, 1700, 1710}, "fifo workers=64": {50000, 50500, 49500},
	}, "direct", "fifo workers=2", "fifo workers=64")
	wr := c.Workloads[0]
	for _, v := range wr.Variants {
		v.Variant.IODelay = time.Millisecond
	}
	wr.Variants[1].Variant.Workers, wr.Variants[2].Variant.Workers = 2, 64
	c.ProfileWorkload = "get"
	diff := "      flat  flat%   sum%        cum   cum%\n     250ms  2.10%  2.10%      250ms  2.10%  runtime.futex\n"
	for _, name := range []string{"direct", "fifo workers=2", "fifo workers=64"} {
		c.Profiles = append(c.Profiles, &ProfileSet{Variant: name, Diffs: map[string]string{"cpu": diff}})
	}
	text := strings.Join(findings(c), "\n")
	assert.Contains(t, text, "fifo workers=2 saturates at 1,700 req/s, 85 % of its concurrency bound (2 workers, each holding a request for at least the store's 1ms: 2,000 req/s)")
	assert.NotContains(t, text, "fifo workers=2 saturates 97 % below direct (`get`); its CPU profile", "no CPU blame for a pool bound by its workers")
	assert.Contains(t, text, "fifo workers=64 saturates 17 % below direct (`get`); its CPU profile beyond direct's grows most in `runtime.futex`")
	assert.NotContains(t, text, "fifo workers=64 saturates at", "64 workers could serve 64,000 req/s, more than direct reached")
}

func TestNumbers(t *testing.T) {
	assert.Equal(t, "41,200", thousands(41200))
	assert.Equal(t, "999", thousands(999.4))
	assert.Equal(t, "1,000,000", thousands(1e6))
	assert.Equal(t, "-1,500", thousands(-1500))
	assert.Equal(t, 2.0, median([]float64{3, 1, 2}))
	assert.Equal(t, 2.5, median([]float64{4, 1, 2, 3}))
	assert.Equal(t, 3.0, spread([]float64{4, 1, 2}))
	assert.Equal(t, " (0.50×)", ratio(1, 2))
	assert.Equal(t, "", ratio(1, 0), "no ratio without a baseline")
}

func TestCPUTicks(t *testing.T) {
	busy, total, err := cpuTicks()
	require.NoError(t, err)
	assert.Positive(t, total)
	assert.LessOrEqual(t, busy, total)
}

func TestOverloadBarsSeries(t *testing.T) {
	c := comparisonOf(nil, "direct", "fifo")
	vs := c.Workloads[0].Variants
	vs[0].Overload = &OverloadRun{Goodput: 100}
	vs[1].Overload = &OverloadRun{Goodput: 90}
	groups, series, good, _ := overloadBars(c.Workloads[0])
	assert.Equal(t, []string{"direct", "fifo"}, groups)
	assert.Equal(t, []string{"at each pool's default policy"}, series, "one policy: one series")
	assert.Equal(t, [][]float64{{100, 90}}, good)

	w := &WorkloadResult{Variants: []*VariantResult{
		{Variant: Variant{Pool: "direct"}, Overload: &OverloadRun{Goodput: 100}},
		{Variant: Variant{Pool: "fifo", Policy: "reject"}, Overload: &OverloadRun{Goodput: 80}},
		{Variant: Variant{Pool: "fifo", Policy: "block"}, Overload: &OverloadRun{Goodput: 70}},
	}}
	groups, series, good, _ = overloadBars(w)
	assert.Equal(t, []string{"direct", "fifo"}, groups)
	assert.Equal(t, []string{"direct (no queue)", "reject", "block"}, series)
	assert.Equal(t, 100.0, good[0][0])
	assert.True(t, math.IsNaN(good[0][1]), "direct's series has no fifo bar")
	assert.Equal(t, 80.0, good[1][1])
	assert.Equal(t, 70.0, good[2][1])
}

// TestChartsOfACapacitySweep draws the charts of a synthetic capacity
// comparison: every chart the numbers allow is drawn, valid SVG, linked
// with its caption, and none becomes a note.
func TestChartsOfACapacitySweep(t *testing.T) {
	wr := &WorkloadResult{Workload: "get", BaseRate: 40000}
	add := func(v Variant, rate float64, p99 time.Duration) {
		vr := &VariantResult{Variant: v, Name: v.Name()}
		for i, r := range []float64{rate, rate * 1.02} {
			vr.Sat = append(vr.Sat, SatRun{Repeat: i + 1, Rate: r, Curve: []CurvePoint{
				{Phase: "ramp", Asked: rate / 2, Achieved: rate / 2, P99: p99 / 4, Pass: true},
				{Phase: "ramp", Asked: rate, Achieved: rate, P99: p99, Pass: true},
				{Phase: "ramp", Asked: 2 * rate, Achieved: 1.1 * rate, P99: 40 * p99},
				{Phase: "validate", Asked: rate, Achieved: rate, P99: p99, Pass: true},
			}})
		}
		h, u := latency.New(), latency.New()
		for i := 1; i <= 1000; i++ {
			latency.Record(h, time.Duration(i)*p99/990)
			latency.Record(u, time.Duration(i)*p99/1100)
		}
		vr.Fixed = &FixedRun{CorrectedHist: h, UncorrectedHist: u, Corrected: latenciesOf(h)}
		wr.Variants = append(wr.Variants, vr)
	}
	add(Variant{Pool: "direct"}, 40000, time.Millisecond)
	for _, pool := range []string{"fifo", "lifo"} {
		for _, c := range []int{32, 256, 1024} {
			add(Variant{Pool: pool, Cap: c, CapSet: true}, 38000+float64(c), 2*time.Millisecond)
		}
	}
	o := DefaultOptions()
	o.Preset = "capacity"
	r := &runner{o: o, t: FullTiming(), p: &plan{Preset: "capacity", Sweep: "cap", OverloadFactor: 2}, log: io.Discard,
		c: &Comparison{Preset: "capacity", Options: o, Dir: t.TempDir(), Workloads: []*WorkloadResult{wr}}}
	r.drawCharts()
	assert.Empty(t, r.c.Notes, "every chart drawn")
	var names []string
	for _, ch := range r.c.Charts {
		names = append(names, filepath.Base(ch.Path))
		assert.NotEmpty(t, ch.Caption, "%s has a caption", ch.Path)
		assertSVG(t, filepath.Join(r.c.Dir, ch.Path))
	}
	assert.Equal(t, []string{"get-latency.svg", "get-saturation.svg", "get-sweep-saturation.svg", "get-sweep-p99.svg"}, names)

	sat, p99 := sweepLines(wr, "cap")
	require.Len(t, sat, 2, "one line per pool, direct left out")
	assert.Equal(t, "fifo", sat[0].Name)
	assert.Equal(t, []float64{32, 256, 1024}, sat[0].X)
	assert.InDelta(t, 1.01*(38000+32), sat[0].Y[0], 1, "the median of the repeats")
	assert.Len(t, p99, 2)
}

// TestQuietWaitsOnceThenLooks: a busy machine is waited for once, up to
// -quiet-wait; later steps only look, each noted, until quiet returns.
func TestQuietWaitsOnceThenLooks(t *testing.T) {
	busy := 3.0
	looks := 0
	o := DefaultOptions()
	o.QuietWait = time.Nanosecond // the first look already passes the deadline
	r := &runner{o: o, log: io.Discard, c: &Comparison{},
		look: func(context.Context, time.Duration) (float64, error) { looks++; return busy, nil }}
	ctx := context.Background()

	r.quiet(ctx, "step 1")
	require.Len(t, r.c.Notes, 1)
	assert.Contains(t, r.c.Notes[0], "no quiet came within 1ns")
	assert.True(t, r.loaded)

	looks = 0
	r.quiet(ctx, "step 2")
	assert.Equal(t, 1, looks, "a machine known to be loaded is looked at once, not waited for")
	require.Len(t, r.c.Notes, 2)
	assert.Contains(t, r.c.Notes[1], "before step 2: still 3.0 cores busy")

	busy = 0.2
	r.quiet(ctx, "step 3")
	assert.False(t, r.loaded)
	assert.Len(t, r.c.Notes, 2, "a quiet machine is not noted")

	r.o.QuietWait = 0
	looks = 0
	r.quiet(ctx, "step 4")
	assert.Zero(t, looks, "-quiet-wait 0 turns the check off")
}

func TestPerSecondLineHasGapsForUnsentSeconds(t *testing.T) {
	wr := &WorkloadResult{Variants: []*VariantResult{{Name: "lifo", Variant: Variant{Pool: "lifo"}, Overload: &OverloadRun{
		PerSecond:   []SecondPoint{{Second: 0, P99: time.Millisecond}, {Second: 1, P99: 2 * time.Millisecond}},
		RecoveryP99: []time.Duration{time.Millisecond},
	}}}}
	tm := QuickTiming()
	tm.Overload = 3 * time.Second
	lines, marks := perSecondLines(wr, tm, 2)
	require.Len(t, lines, 1)
	assert.Equal(t, []float64{0.5, 1.5, 2.5, 3.5}, lines[0].X)
	assert.Equal(t, []float64{1, 2}, lines[0].Y[:2])
	assert.True(t, math.IsNaN(lines[0].Y[2]), "second 2 had no request sent: a gap")
	assert.Equal(t, 1.0, lines[0].Y[3], "the recovery probe after the overload")
	assert.Equal(t, []chart.Mark{{From: 0, To: 3, Label: "overload 2×"}}, marks)
}
