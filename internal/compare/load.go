package compare

import (
	"context"
	"fmt"
	"math"
	"time"

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
	return cfg, nil
}

// saturateConfig is the search's criteria and step lengths.
func (r *runner) saturateConfig(dir string) saturate.Config {
	sc := saturate.DefaultConfig()
	sc.SLO = r.o.SLO
	sc.Step, sc.ValidateFor, sc.Cooldown = r.t.SatStep, r.t.SatValidate, r.t.SatCooldown
	sc.StartRate, sc.MaxRate, sc.Precision = r.t.SatStartRate, r.t.SatMaxRate, r.t.SatPrecision
	sc.Out = dir
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

// search runs a saturation search, its ramp starting at half of hint
// where that is above the configured start, and reduces it to a SatRun;
// the validating run's files go into dir.
func (r *runner) search(ctx context.Context, cfg loadgen.Config, dir string, server map[string]string, hint float64) (SatRun, *loadgen.Result, error) {
	sc := r.saturateConfig(dir)
	sc.StartRate = max(sc.StartRate, math.Round(hint/2))
	sc.MaxRate = max(sc.MaxRate, sc.StartRate)
	sat, err := saturate.Run(ctx, cfg, sc, nil, nil)
	if err != nil {
		return SatRun{}, nil, err
	}
	run := SatRun{Rate: sat.Rate, Validated: sat.Validated, HitMax: sat.HitMax}
	for _, s := range sat.Steps {
		run.Curve = append(run.Curve, CurvePoint{Phase: s.Phase, Asked: s.Asked, Achieved: s.Achieved, P99: s.P99, Pass: s.Pass, Verdict: s.Verdict})
	}
	if sat.Validation != nil {
		report.WriteFiles(dir, sat.Validation, server)
	}
	report.WriteJSON(dir, "saturate.json", sat)
	return run, sat.Validation, nil
}

// fillStore PUTs ids 1..keys of valueSize bytes into the server at target.
func fillStore(ctx context.Context, target string, keys uint64, valueSize int) (elapsed time.Duration, rate float64, err error) {
	cfg := loadgen.DefaultConfig()
	cfg.Target = target
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
