package compare

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/loadgen/config"
)

func curve(points ...result.CurvePoint) []result.SatRun { return []result.SatRun{{Curve: points}} }

// TestAnswerTime: the W of Little's law is the p99 from the send of the
// passing search step nearest the rate.
func TestAnswerTime(t *testing.T) {
	v := &result.VariantResult{Sat: curve(
		result.CurvePoint{Asked: 10_000, Pass: true, P99FromSend: time.Millisecond, P50: 200 * time.Microsecond},
		result.CurvePoint{Asked: 40_000, Pass: true, P99FromSend: 3 * time.Millisecond, P50: time.Millisecond},
		result.CurvePoint{Asked: 70_000, Pass: false, P99FromSend: 90 * time.Millisecond, P50: 50 * time.Millisecond},
	)}
	assert.Equal(t, 3*time.Millisecond, answerTime(v, 65_000), "the nearest passing step, not the failing one")
	assert.Equal(t, time.Millisecond, answerTime(v, 12_000))
	assert.Equal(t, 200*time.Microsecond, unloadedAnswerTime(v), "the median at the lowest passing rate")
	assert.Zero(t, answerTime(&result.VariantResult{}, 65_000), "no search")
	assert.Zero(t, answerTime(nil, 65_000))
	old := &result.VariantResult{Sat: curve(result.CurvePoint{Asked: 10_000, Pass: true})}
	assert.Zero(t, answerTime(old, 10_000), "not recorded")
}

// stepsPlanner is the planner of preset with direct, fifo and lifo searched:
// fifo's search met a stall near the fixed rate and lifo's answered
// fastest, so that sizing each variant by its own search would give each
// its own connections.
func stepsPlanner(t *testing.T, preset string) (planner, *result.WorkloadResult) {
	t.Helper()
	o := plan.DefaultOptions()
	o.Preset, o.Pools, o.Workers, o.Limits = preset, []string{"direct", "fifo", "lifo"}, []int{8}, []string{}
	p, err := plan.New(&o, 2)
	require.NoError(t, err)
	wr := &result.WorkloadResult{Workload: "get", BaseRate: 40_000}
	searches := map[string][]result.SatRun{
		"direct": curve(result.CurvePoint{Asked: 10_000, Pass: true, P50: 300 * time.Microsecond, P99FromSend: time.Millisecond},
			result.CurvePoint{Asked: 28_000, Pass: true, P50: 500 * time.Microsecond, P99FromSend: 2 * time.Millisecond},
			result.CurvePoint{Asked: 40_000, Pass: true, P50: 800 * time.Microsecond, P99FromSend: 4 * time.Millisecond}),
		"fifo": curve(result.CurvePoint{Asked: 10_000, Pass: true, P50: 200 * time.Microsecond, P99FromSend: time.Millisecond},
			result.CurvePoint{Asked: 28_000, Pass: true, P50: 5 * time.Millisecond, P99FromSend: 60 * time.Millisecond}),
		"lifo": curve(result.CurvePoint{Asked: 28_000, Pass: true, P50: 100 * time.Microsecond, P99FromSend: 300 * time.Microsecond}),
	}
	for _, v := range p.Variants {
		if s, ok := searches[v.Pool]; ok {
			s[0].Rate, s[0].Validated = 30_000+10_000*float64(len(wr.Variants)), true
			wr.Variants = append(wr.Variants, &result.VariantResult{Variant: v, Name: v.Name(), Sat: s})
		}
	}
	return planner{p: p, maxConns: o.MaxConns, t: plan.FullTiming()}, wr
}

// TestEveryVariantOfAStepGetsTheSameConnections: the plan sizes each
// step once from direct's search, and every variant's fixed-rate step,
// full-load round and overload step starts with those connections and
// may grow to the same cap, whatever its own search saw; under OwnRates
// the fixed rates differ, the connections do not.
func TestEveryVariantOfAStepGetsTheSameConnections(t *testing.T) {
	for _, preset := range []string{"queues", "slow-backend"} {
		r, wr := stepsPlanner(t, preset)
		s := r.steps(wr)
		require.NotNil(t, s.Fixed, preset)
		require.NotNil(t, s.FullLoad, preset)
		require.NotNil(t, s.Overload, preset)
		assert.Equal(t, plan.Load{Rate: 28_000, Latency: 2 * time.Millisecond, Conns: 112, MaxConns: 256}, *s.Fixed,
			"%s: 2 × 28,000 req/s × direct's 2 ms at 28,000", preset)
		assert.Equal(t, plan.Load{Closed: true, Rate: 40_000, Latency: 300 * time.Microsecond, Conns: 64, MaxConns: 64}, *s.FullLoad,
			"%s: 2 × 40,000 × 0.3 ms is 24: at least 64, no growth", preset)
		assert.Equal(t, plan.Load{Rate: 80_000, Latency: 4 * time.Millisecond, Conns: 640, MaxConns: 4096}, *s.Overload,
			"%s: 2 × 80,000 req/s × direct's 4 ms at its nearest passing rate, up to -max-conns", preset)

		base := config.Default()
		rates := map[float64]bool{}
		for _, v := range wr.Variants {
			f := r.fixed(base, wr, v, s)
			assert.Equal(t, [2]int{s.Fixed.Conns, s.Fixed.MaxConns}, [2]int{f.Conns, f.MaxConns}, "%s %s: fixed", preset, v.Name)
			rates[f.Rate] = true
			fl := r.fullLoad(base, s)
			assert.Equal(t, [2]int{s.FullLoad.Conns, s.FullLoad.MaxConns}, [2]int{fl.Conns, fl.MaxConns}, "%s %s: full load", preset, v.Name)
			assert.Zero(t, fl.Rate, "a closed loop")
			ov := r.overload(base, s)
			assert.Equal(t, [2]int{s.Overload.Conns, s.Overload.MaxConns}, [2]int{ov.Conns, ov.MaxConns}, "%s %s: overload", preset, v.Name)
			assert.Equal(t, 80_000.0, ov.Rate)
			assert.True(t, ov.KeepResults, "served and shed are told apart from results.bin")
		}
		if preset == "slow-backend" {
			assert.Len(t, rates, 3, "each variant at 70 %% of its own saturation")
		} else {
			assert.Equal(t, map[float64]bool{28_000: true}, rates, "every variant at 70 %% of direct's")
		}
	}
}
