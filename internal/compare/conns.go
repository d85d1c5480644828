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

// This file plans the load of a workload's fixed-rate and overload steps
// once, before the first variant's step: one set of connections per step
// for every variant, so that the variants of a step are measured with
// the same clients. Sizing each variant by its own search instead made a
// search's unlucky stall into more connections, and more connections
// queue more requests in the server at the same rate.

// planner sizes and configures the fixed-rate and overload steps from
// the plan, the loader's -max-conns and the step lengths.
type planner struct {
	p        *plan.Plan
	maxConns int
	t        plan.Timing
}

// planner is the runner's.
func (r *runner) planner() planner { return planner{p: r.p, maxConns: r.o.MaxConns, t: r.t} }

// steps sizes wr's steps by Little's law on direct's answer times
// from its saturation search (at direct's saturation, wr.BaseRate), with
// plan.LittleHeadroom, never below plan.MinConns: the fixed-rate step at
// its rate on the p99 from the send of the passing search step nearest
// it, growing up to the loader's default cap; the full-load round before
// the overload step (a closed loop) at direct's saturation on the median
// of its lowest passing step, without growth; the overload step at its
// rate as the fixed-rate step, growing up to -max-conns.
func (pl planner) steps(wr *result.WorkloadResult) *plan.Steps {
	base := wr.Baseline()
	s := &plan.Steps{Workload: wr.Workload}
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

// withLoad sets cfg to l's connections.
func withLoad(cfg config.Config, l *plan.Load) config.Config {
	cfg.Conns, cfg.MaxConns = l.Conns, l.MaxConns
	return cfg
}

// fixed is v's fixed-rate step: its share of refRate, over the
// step's planned connections.
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

// overload is an overload step: the same rate and connections for
// every variant, new connections opened as soon as a request finds every
// one busy, its results kept to tell the 503s apart.
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
// from the actual send (the server's answer time without the loader's
// own wait; the p99 rather than the mean, so that the tail's requests
// find connections too) of v's passing search step whose rate is nearest
// to rate. 0 where none passed or the comparison did not record it.
func answerTime(v *result.VariantResult, rate float64) time.Duration {
	if v == nil {
		return 0
	}
	best, w := math.Inf(1), time.Duration(0)
	for _, s := range v.Sat {
		for _, p := range s.Curve {
			if p.Pass && p.P99FromSend > 0 && math.Abs(p.Asked-rate) < best {
				best, w = math.Abs(p.Asked-rate), p.P99FromSend
			}
		}
	}
	return w
}

// unloadedAnswerTime is the W of plan.LittleConns for a closed loop: the
// median latency of v's passing search step at the lowest rate (0:
// none), what a request takes when nothing queues. A closed loop keeps
// the server busy with rate × that many connections; more only queue in
// the server (near saturation the median is mostly queue: sizing by it
// gives a small server hundreds of connections), and the loader pays for
// each (docs/load-lab.md, "Connections").
func unloadedAnswerTime(v *result.VariantResult) time.Duration {
	if v == nil {
		return 0
	}
	lowest, w := math.Inf(1), time.Duration(0)
	for _, s := range v.Sat {
		for _, p := range s.Curve {
			if p.Pass && p.P50 > 0 && p.Asked < lowest {
				lowest, w = p.Asked, p.P50
			}
		}
	}
	return w
}
