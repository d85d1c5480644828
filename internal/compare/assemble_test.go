package compare

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
)

// TestAddStoresWhatAStepReturned: the comparison holds what each step
// returned and nothing else: its records of the workload's variants
// (a later step's leaving the earlier ones'), its failures, notes and
// loader checks in order, and what it saw of the loader and of kvserver,
// an unpinned loader noted once.
func TestAddStoresWhatAStepReturned(t *testing.T) {
	r := &runner{log: io.Discard}
	wr := &result.WorkloadResult{Workload: "get", Variants: []*result.VariantResult{
		{Variant: plan.Variant{Pool: plan.Baseline}, Name: "direct"},
		{Variant: plan.Variant{Pool: "lifo"}, Name: "lifo"},
	}}
	c := &result.Comparison{Workloads: []*result.WorkloadResult{wr}}

	// Stand-ins for what the search step and the fixed step return.
	search := r.step(wr)
	sat := result.SatRun{Repeat: 1, Rate: 30_000, Validated: true}
	closed := &result.ClosedRun{Conns: 64}
	direct := search.out.variants[0]
	direct.Sat, direct.Closed, direct.Config = []result.SatRun{sat}, closed, map[string]string{"version": "v1"}
	search.out.loader = []result.LoaderCheck{{Workload: "get", Variant: "direct", Step: result.ValidationStep(1)}}
	search.out.loops, search.out.version = 4, "v1"
	search.out.unpinned, search.out.unpinnedCPUs = "not permitted", "2-3"
	r.add(c, wr, search.out)

	fixed := r.step(wr)
	assert.Empty(t, fixed.out.variants[0].Sat, "a step's records start empty")
	fixed.out.variants[1].Fixed = &result.FixedRun{Asked: 21_000}
	fixed.out.failures = []result.Failure{{Workload: "get", Variant: "direct", Step: result.FixedStep, Reason: "kvserver exited mid-step"}}
	fixed.out.notes = []string{"a note"}
	fixed.out.loops, fixed.out.version = 2, "v2"
	fixed.out.unpinned = "not permitted either"
	r.add(c, wr, fixed.out)

	assert.Equal(t, []result.SatRun{sat}, wr.Variants[0].Sat)
	assert.Same(t, closed, wr.Variants[0].Closed, "the fixed step's records leave the search's")
	assert.Nil(t, wr.Variants[0].Fixed)
	assert.Equal(t, &result.FixedRun{Asked: 21_000}, wr.Variants[1].Fixed)
	assert.Equal(t, map[string]string{"version": "v1"}, wr.Variants[0].Config)
	assert.Equal(t, search.out.loader, c.Loader)
	assert.Equal(t, fixed.out.failures, c.Failures)
	assert.Equal(t, []string{"the loader could not pin itself to CPUs 2-3 and ran unpinned: not permitted", "a note"}, c.Notes)
	assert.Equal(t, 4, c.Env.LoaderLoops, "the most loops of any step")
	assert.Equal(t, "not permitted", c.Env.LoaderUnpinned, "the first step's")
	assert.Equal(t, "v1", c.Env.KvserverVersion, "the first server's")
}

// TestBaseRate: -rate where given; else direct's median validated
// saturation, a lower bound where a search was loader-bound; 0 where
// nothing validated or direct was not run.
func TestBaseRate(t *testing.T) {
	f := func(rate float64, sat []result.SatRun, want float64, wantBound bool) {
		t.Helper()
		wr := &result.WorkloadResult{Variants: []*result.VariantResult{{Variant: plan.Variant{Pool: plan.Baseline}, Name: "direct", Sat: sat}}}
		got, bound := baseRate(wr, rate)
		assert.Equal(t, want, got)
		assert.Equal(t, wantBound, bound)
	}
	f(5000, []result.SatRun{{Rate: 9000, Validated: true}}, 5000, false)
	f(0, []result.SatRun{{Rate: 9000, Validated: true}, {Rate: 11_000, Validated: true}, {Rate: 10_000, Validated: true}}, 10_000, false)
	f(0, []result.SatRun{{Rate: 9000, Validated: true, LoaderBound: true}}, 9000, true)
	f(0, []result.SatRun{{Candidate: 9000}}, 0, false)
	got, _ := baseRate(&result.WorkloadResult{}, 0)
	assert.Zero(t, got, "no direct")
}
