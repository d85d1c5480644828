package saturate

import (
	"context"
	"fmt"
	"time"

	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/ratio"
)

// ClosedLoop is the closed-loop measurement that anchors a search: a few
// short rounds in which every connection sends its next request as soon
// as the last is answered (wrk's model), each side's CPU read around
// each. A stall costs a round a few per cent, not a verdict, and the
// median of the rounds stands.
type ClosedLoop struct {
	Conns  int           `json:"conns"`
	Rounds []ClosedRound `json:"rounds"`
	// Throughput is the median of the rounds' answered rates (errors
	// excluded): the anchor.
	Throughput float64 `json:"throughput"`
	// The medians of the rounds' CPU figures (per request: negative or 0
	// where unknown).
	LoaderCPUPerReq time.Duration `json:"loader_cpu_per_request_ns"`
	ServerCPUPerReq time.Duration `json:"server_cpu_per_request_ns"`
	LoaderCPUShare  float64       `json:"loader_cpu_share"`
	ServerCPUShare  float64       `json:"server_cpu_share"`
	LoaderCPUs      int           `json:"loader_cpus"`
	ServerCPUs      int           `json:"server_cpus,omitempty"`
}

// ClosedRound is one round of a ClosedLoop.
type ClosedRound struct {
	Throughput      float64       `json:"throughput"` // answered without error, per second
	Errors          int64         `json:"errors"`
	LoaderCPUPerReq time.Duration `json:"loader_cpu_per_request_ns"`
	LoaderCPUShare  float64       `json:"loader_cpu_share"` // negative: unknown
	ServerCPUPerReq time.Duration `json:"server_cpu_per_request_ns"`
	ServerCPUShare  float64       `json:"server_cpu_share"` // negative: unknown
	ServerCPUs      int           `json:"server_cpus,omitempty"`
}

// ClosedConfig says how to measure a ClosedLoop.
type ClosedConfig struct {
	Rounds   int           // at least 1; 3 by default
	For      time.Duration // each round's length
	Cooldown time.Duration // pause after each round, so that the next (or the search) starts on a drained server
}

// ClosedLoopConfig is the closed loop that anchors sc's search: three
// rounds of half a step each, a cooldown after each (full: 5.5 s rounds,
// about 20 s in all; quick: 2.75 s rounds, about 10 s).
func (sc *Config) ClosedLoopConfig() ClosedConfig {
	return ClosedConfig{Rounds: 3, For: sc.Step / 2, Cooldown: sc.Cooldown}
}

// MeasureClosedLoop runs cc's rounds of a closed loop over load's
// connections (load's rate and duration are replaced), reading the
// server's CPU through sc.ServerCPU around each.
func MeasureClosedLoop(ctx context.Context, load config.Config, cc ClosedConfig, sc *Config) (*ClosedLoop, error) {
	if cc.Rounds < 1 || cc.For <= 0 {
		return nil, fmt.Errorf("a closed loop needs at least one round of positive length (got %d of %v)", cc.Rounds, cc.For)
	}
	cl := &ClosedLoop{Conns: load.Conns}
	for range cc.Rounds {
		c := load
		c.Rate, c.Duration, c.Requests, c.Out, c.KeepResults, c.Progress = 0, cc.For, 0, "", false, 0
		s, res, err := sc.runStep(ctx, c, 0, nil)
		if err != nil {
			return nil, err
		}
		r := ClosedRound{Throughput: record.PerSecond(res.Sent-res.ErrorCount, res.Elapsed), Errors: res.ErrorCount,
			LoaderCPUPerReq: s.CPUPerReq, LoaderCPUShare: s.LoaderCPUShare,
			ServerCPUPerReq: s.ServerCPUPerReq, ServerCPUShare: s.ServerCPUShare, ServerCPUs: s.ServerCPUs}
		cl.LoaderCPUs = s.LoaderCPUs
		cl.ServerCPUs = max(cl.ServerCPUs, s.ServerCPUs)
		cl.Rounds = append(cl.Rounds, r)
		if err := sleepCtx(ctx, cc.Cooldown); err != nil {
			return nil, err
		}
	}
	cl.summarize()
	return cl, nil
}

// summarize sets the medians of the rounds' figures.
func (cl *ClosedLoop) summarize() {
	of := func(f func(ClosedRound) float64) float64 {
		v := make([]float64, 0, len(cl.Rounds))
		for _, r := range cl.Rounds {
			v = append(v, f(r))
		}
		return ratio.Median(v)
	}
	cl.Throughput = of(func(r ClosedRound) float64 { return r.Throughput })
	cl.LoaderCPUPerReq = time.Duration(of(func(r ClosedRound) float64 { return float64(r.LoaderCPUPerReq) }))
	cl.ServerCPUPerReq = time.Duration(of(func(r ClosedRound) float64 { return float64(r.ServerCPUPerReq) }))
	cl.LoaderCPUShare = of(func(r ClosedRound) float64 { return r.LoaderCPUShare })
	cl.ServerCPUShare = of(func(r ClosedRound) float64 { return r.ServerCPUShare })
}

// Range is the lowest and highest round's throughput.
func (cl *ClosedLoop) Range() (lo, hi float64) {
	for i, r := range cl.Rounds {
		if i == 0 || r.Throughput < lo {
			lo = r.Throughput
		}
		hi = max(hi, r.Throughput)
	}
	return lo, hi
}

// OpenVsClosed explains the ratio of an open model's saturation to a
// closed loop's throughput on the same server (Schroeder, Wierman and
// Harchol-Balter, NSDI '06, "Open versus closed: a cautionary tale"). A
// server's throughput is the share of its CPUs it keeps busy over its CPU
// per request (X = U × N / c), so
//
//	open/closed = (U_open / U_closed) × (c_closed / c_open) × rest
//
// A closed loop keeps the server busy by construction (the next request
// comes the moment an answer leaves); an open model under a p99 SLO must
// leave it idle part of the time, or the queue that random arrivals build
// would take the tail past the SLO. Rest is what the CPU figures leave
// unexplained (readings' timing, a server not CPU-bound); near 1 when
// both sides' figures are known.
type OpenVsClosed struct {
	Ratio       float64 `json:"ratio"`
	Utilisation float64 `json:"utilisation_ratio"` // U_open / U_closed; 0: unknown
	Cost        float64 `json:"cost_ratio"`        // c_closed / c_open; 0: unknown
	Rest        float64 `json:"rest"`              // Ratio / (Utilisation × Cost); 0: unknown
}

// Explain is OpenVsClosed for an open-model step (the validating run
// that held) at rate against cl.
func Explain(rate float64, open Step, cl *ClosedLoop) OpenVsClosed {
	var o OpenVsClosed
	if cl == nil || cl.Throughput <= 0 || rate <= 0 {
		return o
	}
	o.Ratio = rate / cl.Throughput
	if open.ServerCPUShare > 0 && cl.ServerCPUShare > 0 {
		o.Utilisation = open.ServerCPUShare / cl.ServerCPUShare
	}
	if open.ServerCPUPerReq > 0 && cl.ServerCPUPerReq > 0 {
		o.Cost = float64(cl.ServerCPUPerReq) / float64(open.ServerCPUPerReq)
	}
	if o.Utilisation > 0 && o.Cost > 0 {
		o.Rest = o.Ratio / (o.Utilisation * o.Cost)
	}
	return o
}
