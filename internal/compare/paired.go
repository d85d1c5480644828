package compare

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
)

// pairedStep names the paired rounds' folders and failures.
const pairedStep = "paired"

// wantsPaired tells whether the plan and Timing ask for paired rounds.
func (r *runner) wantsPaired() bool {
	return r.p.Paired && r.t.ClosedPairs > 0 && r.t.Closed > 0
}

// paired is the step of every variant's rounds paired with direct's on
// as many CPUs. Both sides use the connections of direct's closed-loop
// step: the same clients for every round.
func (r *runner) paired(ctx context.Context, wr *result.WorkloadResult, seed string) outcome {
	s := r.step(wr)
	for i, v := range wr.Variants {
		base := wr.BaselineOf(v)
		if v.Variant.IsBaseline() || base == nil {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		conns := plan.LittleConns(analysis.MedianSaturation(base), unloadedAnswerTime(base), s.o.MaxConns)
		got := s.out.variants[i]
		got.Paired = s.pairedOne(ctx, wr.Workload, s.out.variants[slices.Index(wr.Variants, base)], got, conns, seed)
	}
	return s.out
}

// pairedOne starts direct's kvserver and v's on fresh copies of seed and
// the same CPUs, and runs their closed-loop rounds over conns back to
// back in result.PairOrder, so that the machine's drift between pairs
// cancels inside each pair's ratio. It returns the pairs that finished
// (nil: none).
func (r *step) pairedOne(ctx context.Context, wl string, base, v *result.VariantResult, conns int, seed string) *result.PairedRun {
	dir, rel := r.runDir(wl, v, pairedStep)
	r.quiet(ctx, "paired rounds "+v.Name)
	bsrv := r.launch(ctx, wl, base, pairedStep, seed, filepath.Join(dir, "direct"))
	if bsrv == nil {
		return nil
	}
	defer r.stop(ctx, bsrv, pairedStep)
	vsrv := r.launch(ctx, wl, v, pairedStep, seed, filepath.Join(dir, "variant"))
	if vsrv == nil {
		return nil
	}
	defer r.stop(ctx, vsrv, pairedStep)
	r.settled(ctx, pairedStep, bsrv, vsrv)
	r.warm(ctx, bsrv, pairedStep)
	r.warm(ctx, vsrv, pairedStep)
	pr := &result.PairedRun{Against: base.Name, Conns: conns, Dir: rel, Alternating: true}
	r.logf("%s %s: %d closed-loop rounds of %v paired with %s's, over %d connections", wl, v.Name, r.t.ClosedPairs, r.t.PairRoundLength(), base.Name, conns)
	servers := [2]*instance{bsrv, vsrv}
	round := func(i, side int) (result.ClosedRound, bool) {
		cfg := r.loadConfig(servers[side])
		cfg.Conns, cfg.MaxConns, cfg.Rate, cfg.Duration = conns, conns, 0, r.t.PairRoundLength()
		m, ok := r.measure(ctx, servers[side], pairedStep, cfg, filepath.Join(dir, fmt.Sprintf("pair-%d-%s", i, []string{"direct", "variant"}[side])))
		if !ok {
			return result.ClosedRound{}, false
		}
		return r.closedRound(m), true
	}
	if !pairRounds(ctx, r.t.ClosedPairs, r.t.PairPauseLength(), round, func(_ int, pair [2]result.ClosedRound) {
		pr.Base, pr.Variant = append(pr.Base, pair[0]), append(pr.Variant, pair[1])
	}) {
		return finished(pr)
	}
	a := analysis.PairedOf(pr)
	first, second := analysis.PairedByOrder(pr)
	r.logf("%s %s against %s, %d pairs: throughput %s, server CPU per request %s (throughput with direct's round first %s, with %s's first %s)",
		wl, v.Name, base.Name, len(pr.Base), a.Throughput, a.CPU, first.Throughput, v.Name, second.Throughput)
	return pr
}

// finished is pr where a pair finished, nil where none did.
func finished(pr *result.PairedRun) *result.PairedRun {
	if len(pr.Base) == 0 {
		return nil
	}
	return pr
}
