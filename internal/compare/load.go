package compare

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/harness"
	"github.com/kvpool/kvpool/internal/loadgen"
	"github.com/kvpool/kvpool/internal/loadgen/fill"
	"github.com/kvpool/kvpool/internal/loadgen/report"
	"github.com/kvpool/kvpool/internal/loadgen/saturate"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
)

// This file is the comparison's whole use of the loader: configure a run,
// run it into a folder, fill a store, search for saturation.

// loadConfig is the loader's configuration for workload wl against target.
func (r *runner) loadConfig(target, wl string) (loadgen.Config, error) {
	cfg := loadgen.DefaultConfig()
	mix, err := workload.ParseMix(wl)
	if err != nil {
		return cfg, err
	}
	cfg.Target = target
	cfg.Workload.Mix = mix
	cfg.Workload.Keys = r.o.Keys
	cfg.Workload.ValueSize = r.o.ValueSize
	cfg.Progress = 0
	cfg.KeepResults = false
	cfg.CPUs = r.pl.Loader // one event loop per CPU (Loops 0)
	return cfg, nil
}

// littleHeadroom is how many times the connections Little's law asks for
// the fixed-rate and overload steps open before they start: with L = rate
// × W requests in flight on average, connections = L would all be busy
// at the average and every burst would wait in the loader (its send lag,
// measured as latency once corrected); twice L leaves the loader idle
// connections through bursts of twice the mean, and costs only idle
// sockets.
const littleHeadroom = 2

// minConns is the fewest connections a step starts with: loadgen's
// default, what every step opened before steps were sized.
const minConns = 64

// littleConns is how many connections carry rate req/s whose answers
// take w each, by Little's law (in flight = rate × w), with
// littleHeadroom: ceil(littleHeadroom × rate × w), at least minConns and
// at most maxConns. An unknown w (0) gives minConns.
func littleConns(rate float64, w time.Duration, maxConns int) int {
	n := int(math.Ceil(littleHeadroom * rate * w.Seconds()))
	return max(minConns, min(n, maxConns))
}

// answerTime is the W of littleConns for a step at rate: the p99 from
// the actual send (the server's answer time without the loader's own
// wait; the p99 rather than the mean, so that the tail's requests find
// connections too) of the passing search step whose rate is nearest to
// rate, from v's searches, else from direct's (base). 0 where none
// passed or the comparison did not record it.
func answerTime(v, base *VariantResult, rate float64) time.Duration {
	for _, from := range []*VariantResult{v, base} {
		if from == nil {
			continue
		}
		best, w := math.Inf(1), time.Duration(0)
		for _, s := range from.Sat {
			for _, p := range s.Curve {
				if p.Pass && p.P99FromSend > 0 && math.Abs(p.Asked-rate) < best {
					best, w = math.Abs(p.Asked-rate), p.P99FromSend
				}
			}
		}
		if w > 0 {
			return w
		}
	}
	return 0
}

// saturateConfig is the search's criteria and step lengths.
func (r *runner) saturateConfig(dir string) saturate.Config {
	sc := saturate.DefaultConfig()
	sc.SLO = r.o.SLO
	sc.Step, sc.ValidateFor, sc.Cooldown = r.t.SatStep, r.t.SatValidate, r.t.SatCooldown
	sc.StartRate, sc.MaxRate, sc.Precision = r.t.SatStartRate, r.t.SatMaxRate, r.t.SatPrecision
	sc.Out = dir
	sc.Shared = r.pl.Shared()
	return sc
}

// runInto runs cfg with its files streamed into dir, then writes the
// summary (with server, kvserver's settings) and the .hgrm files there.
// A file that could not be written is returned as note; the run stands.
func runInto(ctx context.Context, cfg loadgen.Config, dir string, server map[string]string) (res *loadgen.Result, note string, err error) {
	cfg.Out = dir
	res, err = loadgen.Run(ctx, cfg, nil)
	if err != nil {
		return nil, "", err
	}
	if res.OutputErr != nil {
		note = res.OutputErr.Error()
	}
	if werr := report.WriteFiles(dir, res, server); werr != nil {
		note = werr.Error()
	}
	return res, note, nil
}

// search runs a saturation search of srv, its ramp starting at half of
// hint where that is above the configured start, and reduces it to a
// SatRun; the validating run's files go into dir. Each step reads srv's
// CPU around it, so that a step the loader could not deliver is told
// from the server's limit (saturate.Bound). It returns the validating
// run and its step (nil where none ran).
func (r *runner) search(ctx context.Context, cfg loadgen.Config, dir string, srv *harness.Server, server map[string]string, hint float64) (SatRun, *loadgen.Result, *saturate.Step, error) {
	sc := r.saturateConfig(dir)
	sc.StartRate = max(sc.StartRate, math.Round(hint/2))
	sc.MaxRate = max(sc.MaxRate, sc.StartRate)
	cpus := r.serverCPUs(srv)
	sc.ServerCPU = func(context.Context) (time.Duration, int, error) {
		p, err := srv.Sample()
		return p.CPU, cpus, err
	}
	sat, err := saturate.Run(ctx, cfg, sc, nil, nil)
	if err != nil {
		return SatRun{}, nil, nil, err
	}
	// Rate is the search's figure, validated or not (Validated says
	// which), as this comparison has always read it: the candidate.
	run := SatRun{Rate: sat.Candidate, Validated: sat.Validated, HitMax: sat.HitMax,
		LoaderBound: sat.LoaderBound, LoaderCeiling: sat.LoaderCeiling, LoaderCPUs: sat.LoaderCPUs, Why: sat.Why}
	var validation *saturate.Step
	for i, s := range sat.Steps {
		run.Curve = append(run.Curve, CurvePoint{Phase: s.Phase, Asked: s.Asked, Achieved: s.Achieved, P50: s.P50, P99: s.P99, P99FromSend: s.P99Uncorr,
			Pass: s.Pass, Verdict: s.Verdict, LoaderShare: s.LoaderCPUShare, ServerShare: s.ServerCPUShare, LoaderBound: s.LoaderBound, Retry: s.Retry})
		if s.Phase == saturate.PhaseValidate {
			validation = &sat.Steps[i]
			run.ServerCPUPerRequest = s.ServerCPUPerReq
		}
	}
	if sat.Validation != nil {
		report.WriteFiles(dir, sat.Validation, server)
	}
	report.WriteJSON(dir, "saturate.json", sat)
	return run, sat.Validation, validation, nil
}

// unloadedAnswerTime is the W of littleConns for a closed loop: the
// median latency of v's passing search step at the lowest rate (0:
// none), what a request takes when nothing queues. A closed loop keeps
// the server busy with rate × that many connections; more only queue in
// the server (near saturation the median is mostly queue, and sizing by
// it gave a 2-CPU server 500 connections), and the loader pays for each.
func unloadedAnswerTime(v *VariantResult) time.Duration {
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

// fillStore PUTs ids 1..keys of valueSize bytes into the server at
// target, the loader on its CPUs (empty: unpinned).
func fillStore(ctx context.Context, target string, keys uint64, valueSize int, cpus cpuset.Set) (elapsed time.Duration, rate float64, err error) {
	cfg := loadgen.DefaultConfig()
	cfg.Target = target
	cfg.CPUs = cpus
	cfg.Workload.Keys, cfg.Workload.ValueSize = keys, valueSize
	cfg.Progress = 0
	cfg.KeepResults = false
	fr, err := fill.Run(ctx, cfg, fill.Range{From: 1, To: keys}, nil)
	if err != nil {
		return 0, 0, err
	}
	if !fr.Complete {
		return 0, 0, fmt.Errorf("fill stopped at id %d of %d (%d errors)", fr.ResumeFrom, keys, fr.ErrorCount)
	}
	return fr.Elapsed, fr.AchievedRate(), nil
}
