package compare

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/loadgen/saturate"
)

// closedStep names the closed-loop step's folder and failures.
const closedStep = "closed"

// wantsClosed tells whether v gets a closed-loop step: direct where its
// saturation is searched (the cross-check), every variant under ClosedAll.
func (r *runner) wantsClosed(v *result.VariantResult) bool {
	if r.t.Closed <= 0 || r.t.ClosedRounds < 1 {
		return false
	}
	return r.p.ClosedAll || v.Variant.IsBaseline() && (r.o.Rate <= 0 || r.p.SaturateAll)
}

// closed runs v's closed-loop step, ClosedRounds rounds of Closed, on
// srv, the server of its last search (the same process on the same
// CPUs), once it is idle again. Its connections are Little's law's at
// v's median saturation with the answer time when nothing queues
// (unloadedAnswerTime): in a closed loop more only queue in the server.
// Nil where a round did not finish.
func (r *step) closed(ctx context.Context, v *result.VariantResult, srv *instance) *result.ClosedRun {
	wl := srv.wl
	dir, rel := r.runDir(wl, v, closedStep)
	r.settle(ctx, srv.Server, fmt.Sprintf("%s %s %s", wl, v.Name, closedStep), settleStart)
	cfg := r.loadConfig(srv)
	cfg.Conns = plan.LittleConns(analysis.MedianSaturation(v), unloadedAnswerTime(v), r.o.MaxConns)
	cfg.Rate, cfg.Duration, cfg.MaxConns = 0, r.t.Closed, cfg.Conns
	r.logf("%s %s: closed loop over %d connections, %d × %v", wl, v.Name, cfg.Conns, r.t.ClosedRounds, r.t.Closed)
	cr := &result.ClosedRun{Conns: cfg.Conns, Dir: rel}
	for i := 1; i <= r.t.ClosedRounds; i++ {
		if i > 1 && !pause(ctx, r.t.SatCooldown) { // the first follows the settle
			return nil
		}
		m, ok := r.measure(ctx, srv, closedStep, cfg, filepath.Join(dir, fmt.Sprintf("round-%d", i)))
		if !ok {
			return nil
		}
		cr.Rounds = append(cr.Rounds, r.closedRound(m))
	}
	r.logf("%s %s: closed loop %.0f req/s (median of %d rounds), loader-bound: %v", wl, v.Name, analysis.Median(cr.Rates()), len(cr.Rounds), cr.LoaderBound())
	return cr
}

// closedRound is what a closed-loop run m measured; it was loader-bound
// by saturate's CPU rule alone (CPUBound): with no schedule, a closed
// loop cannot fall behind.
func (r *step) closedRound(m stepRun) result.ClosedRound {
	res := m.res
	r.sawLoader(res)
	round := result.ClosedRound{Rate: res.AchievedRate(), Loader: res.LoaderUse(), Server: m.span.use(),
		ErrorRate: res.ErrorRate(), ServerCPUPerRequest: m.perRequest()}
	round.LoaderBound, round.Why = boundWhy(saturate.CPUBound(round.Loader, round.Server, r.pl.Shared()))
	return round
}
