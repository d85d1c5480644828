package compare

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/loadgen/config"
)

// planner sizes a workload's fixed-rate and overload steps once, before
// the first variant's, so that every variant of a step is measured with
// the same connections (sized by its own search, an unlucky stall gave a
// variant more connections, and more queue more in the server).
type planner struct {
	p        *plan.Plan
	maxConns int
	t        plan.Timing
}

func (r *runner) planner() planner { return planner{p: r.p, maxConns: r.o.MaxConns, t: r.t} }

// steps sizes wr's steps by Little's law (plan.LittleConns) on direct's
// answer times in its search: the fixed-rate and overload steps at their
// rates (answerTime), the full-load round at direct's saturation with no
// queueing (unloadedAnswerTime).
func (pl planner) steps(wr *result.WorkloadResult) *plan.Steps {
	base := wr.Baseline()
	s := &plan.Steps{}
	if pl.p.Fixed {
		rate := plan.FixedShare * wr.BaseRate
		w := answerTime(base, rate)
		conns := plan.LittleConns(rate, w, pl.maxConns)
		s.Fixed = &plan.Load{Rate: rate, Latency: w, Conns: conns, MaxConns: max(config.Default().MaxConns, conns)}
	}
	if pl.p.Overload {
		if pl.t.Closed > 0 {
			w := unloadedAnswerTime(base)
			conns := plan.LittleConns(wr.BaseRate, w, pl.maxConns)
			s.FullLoad = &plan.Load{Closed: true, Rate: wr.BaseRate, Latency: w, Conns: conns, MaxConns: conns}
		}
		rate := pl.p.OverloadFactor * wr.BaseRate
		w := answerTime(base, rate)
		s.Overload = &plan.Load{Rate: rate, Latency: w, Conns: plan.LittleConns(rate, w, pl.maxConns), MaxConns: pl.maxConns}
	}
	return s
}

// stepsText is the plan for the log.
func stepsText(s *plan.Steps) string {
	var parts []string
	for _, x := range []struct {
		name string
		l    *plan.Load
	}{{"fixed", s.Fixed}, {"full-load", s.FullLoad}, {"overload", s.Overload}} {
		if x.l != nil {
			parts = append(parts, fmt.Sprintf("%s %d (up to %d; W %v)", x.name, x.l.Conns, x.l.MaxConns, x.l.Latency))
		}
	}
	return strings.Join(parts, ", ")
}

func withLoad(cfg config.Config, l *plan.Load) config.Config {
	cfg.Conns, cfg.MaxConns = l.Conns, l.MaxConns
	return cfg
}

// fixed is v's fixed-rate step.
func (pl planner) fixed(cfg config.Config, wr *result.WorkloadResult, v *result.VariantResult, s *plan.Steps) config.Config {
	cfg = withLoad(cfg, s.Fixed)
	cfg.Rate, cfg.Duration = plan.FixedShare*pl.refRate(wr, v), pl.t.Fixed
	cfg.Interval = fixedInterval(cfg.Duration)
	return cfg
}

// fullLoad is the closed-loop round before v's overload step.
func (pl planner) fullLoad(cfg config.Config, s *plan.Steps) config.Config {
	cfg = withLoad(cfg, s.FullLoad)
	cfg.Rate, cfg.Duration = 0, pl.t.Closed
	return cfg
}

// overload is an overload step; it opens a connection as soon as a
// request finds every one busy, and keeps its results to tell 503s apart.
func (pl planner) overload(cfg config.Config, s *plan.Steps) config.Config {
	cfg = withLoad(cfg, s.Overload)
	cfg.Rate, cfg.Duration = s.Overload.Rate, pl.t.Overload
	cfg.GrowAfter, cfg.Timeout = time.Millisecond, pl.t.RequestTimeout
	cfg.KeepResults = true
	return cfg
}

// refRate is the saturation v's fixed-rate step, profile run and probes
// take their share of: direct's (wr.BaseRate), or under plan.OwnRates v's
// own median saturation where its searches found one.
func (pl planner) refRate(wr *result.WorkloadResult, v *result.VariantResult) float64 {
	if pl.p.OwnRates {
		if own := analysis.MedianSaturation(v); own > 0 {
			return own
		}
	}
	return wr.BaseRate
}

// answerTime is the W of plan.LittleConns for a step at rate: the p99
// from the send (the tail's requests need connections too) of v's passing
// search step nearest rate; 0 where none is recorded.
func answerTime(v *result.VariantResult, rate float64) time.Duration {
	return passingLeast(v, func(p result.CurvePoint) (float64, time.Duration) { return math.Abs(p.Asked - rate), p.P99FromSend })
}

// unloadedAnswerTime is the W of plan.LittleConns for a closed loop: the
// median latency of v's passing search step at the lowest rate (0: none),
// what a request takes when nothing queues (near saturation the median is
// mostly queue; docs/load-lab.md, "Connections").
func unloadedAnswerTime(v *result.VariantResult) time.Duration {
	return passingLeast(v, func(p result.CurvePoint) (float64, time.Duration) { return p.Asked, p.P50 })
}

// passingLeast is the time that of reads (w) from the passing step of
// v's searches whose key (also from of) is least, among the steps with a
// w recorded; 0 where there is none.
func passingLeast(v *result.VariantResult, of func(result.CurvePoint) (key float64, w time.Duration)) time.Duration {
	if v == nil {
		return 0
	}
	least, w := math.Inf(1), time.Duration(0)
	for _, s := range v.Sat {
		for _, p := range s.Curve {
			if key, pw := of(p); p.Pass && pw > 0 && key < least {
				least, w = key, pw
			}
		}
	}
	return w
}
