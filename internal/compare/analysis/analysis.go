// Package analysis derives from what a comparison measured every number
// its report shows beyond the measured ones (medians, spreads, ratios to
// direct, costs per request) and the findings they support, as data
// (kind, variants, figures with their intervals, verdict). Analyze is a
// pure function of the result; the report only formats what it finds.
package analysis

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/kvpool/kvpool/internal/compare/chart"
	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/cpuset"
)

// Analysis is what Analyze derives from one comparison.
type Analysis struct {
	Workloads  []*Workload // in the comparison's order
	Findings   []Finding   // in the report's order
	Metastable *Metastable // nil but for the metastable preset
	Writes     *Writes     // nil but for the writes preset
	// ProbesStopped: a variant's recovery probes stopped at the first
	// normal one (verdict.Normal), which the recovery rule reads no
	// further than; false where every variant took them all, or a failed
	// probe ended them.
	ProbesStopped bool
	// LoaderKept counts the steps whose loader kept up, of c.Loader.
	LoaderKept int
}

// Workload is one workload's derived numbers.
type Workload struct {
	Name     string
	Variants []*Variant // in the comparison's order
	Base     *Variant   // direct's (the first, under the scaling preset; nil: none)
	// OnlyBaseRate: no variant ran a fixed-rate step and none but direct
	// a saturation search (the policies and overload presets).
	OnlyBaseRate bool
	// Grid is the scaling preset's variants by CPU count (nil: not a
	// scaling workload).
	Grid *Grid
	// FixedRate is the fixed-rate step's rate: plan.FixedShare of the
	// workload's BaseRate (under plan.OwnRates each variant's step ran at
	// its own share instead, its FixedRun.Asked).
	FixedRate float64
	// OverloadMultiple is direct's overload step's asked rate ÷ BaseRate
	// (0: none ran).
	OverloadMultiple float64
	// SweepSaturation and SweepP99 are the lines of a sweep of -cap or
	// -workers (plan.Plan.Sweep; nil: none), one per pool and policy,
	// direct left out: its median saturation and its fixed-rate step's
	// corrected p99 (ms) against the swept setting.
	SweepSaturation, SweepP99 []Line
	// PairedWidths are the narrowest and widest half-widths of its paired
	// closed-loop intervals (pairedWidths; N 0: none is bounded).
	PairedWidths Interval
	// OverloadBars and OverloadTimeline are the overload step's charts
	// (overloadBars, overloadTimeline; nil: it did not run).
	OverloadBars     *Bars
	OverloadTimeline []Line
	// Percentiles and Curves are the latency and saturation charts'
	// lines (percentileLines, curveLines; nil: none to draw).
	Percentiles []chart.PercentileLine
	Curves      []chart.CurveLine
}

// Variant is the workload's variant named name (nil: none).
func (w *Workload) Variant(name string) *Variant {
	return byName(w.Variants, name, func(v *Variant) string { return v.Name })
}

// byName is the first of xs whose name (nameOf) is name (nil: none).
func byName[T any](xs []*T, name string, nameOf func(*T) string) *T {
	if i := slices.IndexFunc(xs, func(x *T) bool { return nameOf(x) == name }); i >= 0 {
		return xs[i]
	}
	return nil
}

// Variant is one variant's derived numbers; a step it did not run is nil.
type Variant struct {
	Name     string
	r        *result.VariantResult // what it measured
	Sat      *Searches
	Closed   *Closed
	Paired   *Paired
	Fixed    *Fixed
	Overload *Overload
}

// Searches summarises a variant's saturation searches.
type Searches struct {
	// Rate is over the validated searches only (N 0: none validated,
	// and nothing is computed from the searches' figures).
	Rate Estimate
	// Bracket is where the searches ended: the median of their brackets'
	// ends (Lo held, Hi failed twice; 0: not found); Brackets is false
	// where the searches did not record them.
	Bracket  Interval
	Brackets bool
	// Candidate is the median of the rates whose validation failed, in
	// the searches that validated none (0: every search validated).
	Candidate float64
	// Ratio is Rate's median to direct's on as many CPUs; NaN where
	// either is a lower bound or direct has none.
	Ratio float64
	// LowerBound: a search was loader-bound, so Rate is only a lower
	// bound; LoaderCPUs is the fewest the loader had (0 unknown),
	// LoaderBoundRuns how many searches were.
	LowerBound      bool
	LoaderCPUs      int
	LoaderBoundRuns int
	// Runs are the searches, Validated those whose rate held over the
	// longer validating run too; HitMax: one passed the highest rate.
	Runs, Validated int
	HitMax          bool
	// CPUPerRequest is kvserver's CPU per request over the validating
	// runs (median; 0 unknown), CPURatio it to direct's.
	CPUPerRequest time.Duration
	CPURatio      float64
	// ServerShare is kvserver's CPU share (of its CPUs) over the
	// validating runs that held, the median (0: unknown).
	ServerShare float64
}

// Closed summarises a closed-loop step.
type Closed struct {
	Conns int
	Rate  Estimate
	// CPUPerRequest is kvserver's, the median over the rounds; CPURatio
	// it to direct's on as many CPUs (NaN: none).
	CPUPerRequest time.Duration
	CPURatio      float64
	// Loader and Server are each side's CPU use, its share the median
	// over the rounds.
	Loader, Server cpuset.Use
	// LoaderBound: a round was, for Why.
	LoaderBound bool
	Why         string
}

// Fixed is a fixed-rate step against direct's: each percentile's and the
// CPU per request's ratio (NaN where direct has none, or did not keep
// up: its latencies are then a growing queue's).
type Fixed struct {
	P50, P90, P99, P999, Max float64
	CPU                      float64
	// KeptUp: the step served what it asked (keptUp); Behind says how it
	// fell short where it did not.
	KeptUp bool
	Behind string
}

// MinAchieved is the share of its asked rate a fixed-rate step must
// achieve to count as kept up.
const MinAchieved = 0.98

// keptUp tells whether f achieved MinAchieved of its asked rate without
// falling behind its schedule, and where not, how.
func keptUp(f *result.FixedRun) (bool, string) {
	switch {
	case f.Asked > 0 && f.Achieved < MinAchieved*f.Asked:
		return false, fmt.Sprintf("achieved %.0f of %.0f req/s asked (%.1f %%)", f.Achieved, f.Asked, 100*f.Achieved/f.Asked)
	case f.Behind != "":
		return false, f.Behind
	}
	return true, ""
}

// Overload is what an overload step's figures make.
type Overload struct {
	// Goodput, ServedP99 and ServedP99FromSend to direct's (NaN: none).
	Goodput, ServedP99, ServedP99FromSend float64
	// ServedCPU is what a served request is taken to cost kvserver
	// (servedCPU).
	ServedCPU time.Duration
	// CPUPerShed is what a 503 cost (cpuPerShed), ShedCostRatio that
	// against ServedCPU; ShedCost: they could be derived.
	CPUPerShed    time.Duration
	ShedCostRatio float64
	ShedCost      bool
	PeakRSS       int64 // the largest RSS sample, in bytes
}

// Analyze derives c's numbers and findings.
func Analyze(c *result.Comparison) *Analysis {
	a := &Analysis{}
	for _, wr := range c.Workloads {
		w := workloadOf(wr)
		w.OverloadBars, w.OverloadTimeline = overloadBars(wr), overloadTimeline(wr, c.Options.StepTiming())
		w.Percentiles, w.Curves = percentileLines(wr), curveLines(wr, w.Grid)
		if c.Plan != nil && c.Plan.Sweep != "" {
			w.SweepSaturation, w.SweepP99 = sweepLines(wr, w, c.Plan.Sweep)
		}
		a.Workloads = append(a.Workloads, w)
	}
	a.Findings = findings(c, a)
	a.Metastable = metastableOf(c)
	a.Writes = writesOf(c)
	a.ProbesStopped = probesStopped(c)
	for _, l := range c.Loader {
		if l.KeptUp {
			a.LoaderKept++
		}
	}
	return a
}

// workloadOf derives each variant's figures, then their ratios to the
// figures of direct on as many CPUs.
func workloadOf(wr *result.WorkloadResult) *Workload {
	w := &Workload{Name: wr.Workload, OnlyBaseRate: true, FixedRate: plan.FixedShare * wr.BaseRate}
	of := map[*result.VariantResult]*Variant{}
	for _, v := range wr.Variants {
		x := &Variant{Name: v.Name, r: v, Sat: saturationOf(v), Closed: closedOf(v), Paired: pairedOf(v),
			Fixed: fixedOf(v, wr.BaselineOf(v)), Overload: overloadOf(v, wr.Baseline())}
		w.Variants, of[v] = append(w.Variants, x), x
		if v.Fixed != nil || (!v.Variant.IsBaseline() && len(v.Sat) > 0) {
			w.OnlyBaseRate = false
		}
	}
	for _, v := range wr.Variants {
		if base := of[wr.BaselineOf(v)]; base != nil {
			of[v].ratiosTo(base)
		}
	}
	w.Base, w.PairedWidths = of[wr.Baseline()], pairedWidths(w)
	if b := wr.Baseline(); b != nil && b.Overload != nil && wr.BaseRate > 0 {
		w.OverloadMultiple = b.Overload.Asked / wr.BaseRate
	}
	if slices.ContainsFunc(wr.Variants, func(v *result.VariantResult) bool { return v.Variant.CPUs > 0 }) {
		w.Grid = gridOf(w)
	}
	return w
}

// sweepLines are w's lines against sweep's setting ("cap" or "workers").
func sweepLines(wr *result.WorkloadResult, w *Workload, sweep string) (sat, p99 []Line) {
	var names []string
	for i, v := range wr.Variants {
		x := float64(v.Variant.Cap)
		if sweep == "workers" {
			x = float64(v.Variant.Workers)
		}
		if v.Variant.IsBaseline() || x <= 0 {
			continue
		}
		name := v.Variant.Pool
		if v.Variant.Policy != "" {
			name += "/" + v.Variant.Policy
		}
		k := indexOf(&names, name)
		if k == len(sat) {
			sat, p99 = append(sat, Line{Name: name}), append(p99, Line{Name: name})
		}
		if s := w.Variants[i].Sat; s != nil {
			sat[k].X, sat[k].Y = append(sat[k].X, x), append(sat[k].Y, s.Rate.Median)
		}
		if v.Fixed != nil {
			p99[k].X, p99[k].Y = append(p99[k].X, x), append(p99[k].Y, ms(v.Fixed.Corrected.P99))
		}
	}
	return slices.DeleteFunc(sat, noPoint), slices.DeleteFunc(p99, noPoint)
}

func (x *Variant) ratiosTo(base *Variant) {
	if s := x.Sat; s != nil {
		if x.ranked() > 0 {
			s.Ratio = ratio(s.Rate.Median, base.ranked())
		}
		if base.Sat != nil {
			s.CPURatio = ratio(float64(s.CPUPerRequest), float64(base.Sat.CPUPerRequest))
		}
	}
	if c := x.Closed; c != nil && base.Closed != nil {
		c.CPURatio = ratio(float64(c.CPUPerRequest), float64(base.Closed.CPUPerRequest))
	}
}

// MedianSaturation is the median of v's validated searches' rates (0:
// none validated): Searches.Rate, and what the runner sets later steps by.
func MedianSaturation(v *result.VariantResult) float64 { return estimateOf(v.SatRates()).Median }

// ranked is v's saturation where it can be ranked, and a ratio to it
// taken: its median, 0 where v is nil, ran no search, validated none,
// or is only a lower bound.
func (v *Variant) ranked() float64 {
	if v == nil || v.Sat == nil || v.Sat.LowerBound {
		return 0
	}
	return v.Sat.Rate.Median
}

// satFigure is v's saturation as a figure: its median and the range of
// its searches.
func (v *Variant) satFigure() Figure {
	iv := v.Sat.Rate.Interval
	return Figure{Of: v.Name, Name: Saturation, Value: v.Sat.Rate.Median, Interval: &iv}
}

func saturationOf(v *result.VariantResult) *Searches {
	if len(v.Sat) == 0 {
		return nil
	}
	s := &Searches{Rate: estimateOf(v.SatRates()), LoaderCPUs: v.LoaderCPUs(), Runs: len(v.Sat),
		Brackets: v.Brackets(), Ratio: math.NaN(), CPURatio: math.NaN()}
	// The figures come from the searches that held in validation where
	// any did; one that held nothing only says where it failed.
	held := func(r result.SatRun) bool { return !s.Measured() || r.Rate > 0 }
	var cpu, failed, los, his, shares []float64
	for _, r := range v.Sat {
		cpu = append(cpu, float64(r.ServerCPUPerRequest))
		if r.LoaderBound && held(r) {
			s.LoaderBoundRuns++
		}
		if r.Validated {
			s.Validated++
		} else {
			failed = append(failed, r.Candidate)
		}
		s.HitMax = s.HitMax || r.HitMax
		if s.Brackets && held(r) {
			los, his = append(los, r.Bracket.Lo), append(his, r.Bracket.Hi)
		}
		if x := r.ValidatedServerShare(); x > 0 {
			shares = append(shares, x)
		}
	}
	s.LowerBound = s.LoaderBoundRuns > 0
	s.CPUPerRequest, s.Candidate, s.ServerShare = medianCost(cpu), Median(failed), Median(shares)
	if s.Brackets {
		s.Bracket = Interval{Lo: Median(los), Hi: Median(his), N: len(los)}
	}
	return s
}

// Measured tells whether a search validated a rate: only then is there
// a saturation to compare, rank or take a share of.
func (s *Searches) Measured() bool { return s != nil && s.Rate.N > 0 }

// medianCost is the median of the known (positive) costs in ns, 0 where
// none is known.
func medianCost(ns []float64) time.Duration {
	return time.Duration(Median(slices.DeleteFunc(slices.Clone(ns), func(x float64) bool { return x <= 0 })))
}

func closedOf(v *result.VariantResult) *Closed {
	cr := v.Closed
	if cr == nil || len(cr.Rounds) == 0 {
		return nil
	}
	c := &Closed{Conns: cr.Conns, Rate: estimateOf(cr.Rates()), CPURatio: math.NaN()}
	var lshare, sshare, cpu []float64
	for _, rd := range cr.Rounds {
		cpu = append(cpu, float64(rd.ServerCPUPerRequest))
		lshare, sshare = append(lshare, rd.Loader.Share), append(sshare, rd.Server.Share)
		c.Loader.CPUs, c.Server.CPUs = rd.Loader.CPUs, rd.Server.CPUs
		if rd.LoaderBound && !c.LoaderBound {
			c.LoaderBound, c.Why = true, rd.Why
		}
	}
	c.Loader.Share, c.Server.Share, c.CPUPerRequest = Median(lshare), Median(sshare), medianCost(cpu)
	return c
}

func fixedOf(v, base *result.VariantResult) *Fixed {
	f := v.Fixed
	if f == nil {
		return nil
	}
	x := &Fixed{}
	x.KeptUp, x.Behind = keptUp(f)
	bf := &result.FixedRun{} // direct's where it kept up: else no ratio
	if base != nil && base.Fixed != nil {
		if ok, _ := keptUp(base.Fixed); ok {
			bf = base.Fixed
		}
	}
	d := func(x, b time.Duration) float64 { return ratio(float64(x), float64(b)) }
	x.P50, x.P90, x.P99 = d(f.Corrected.P50, bf.Corrected.P50), d(f.Corrected.P90, bf.Corrected.P90), d(f.Corrected.P99, bf.Corrected.P99)
	x.P999, x.Max, x.CPU = d(f.Corrected.P999, bf.Corrected.P999), d(f.Corrected.Max, bf.Corrected.Max), d(f.ServerCPUPerRequest, bf.ServerCPUPerRequest)
	return x
}

func overloadOf(v, base *result.VariantResult) *Overload {
	o := v.Overload
	if o == nil {
		return nil
	}
	bo := &result.OverloadRun{}
	if base != nil && base.Overload != nil {
		bo = base.Overload
	}
	a := &Overload{Goodput: ratio(o.Goodput, bo.Goodput), ServedP99: ratio(float64(o.ServedP99), float64(bo.ServedP99)),
		ServedP99FromSend: ratio(float64(o.ServedP99Uncorrected), float64(bo.ServedP99Uncorrected))}
	a.ServedCPU = servedCPU(o)
	a.CPUPerShed, a.ShedCost = cpuPerShed(o)
	if a.ShedCost {
		a.ShedCostRatio = float64(a.CPUPerShed) / float64(a.ServedCPU)
	}
	for _, p := range o.RSS {
		a.PeakRSS = max(a.PeakRSS, p.RSS)
	}
	return a
}

// servedCPU is what a served request is taken to cost kvserver in the
// overload step: as in the full-load round before it, else in the
// baseline probe (half the load, so a served request costs more there).
// 0 where neither was measured.
func servedCPU(o *result.OverloadRun) time.Duration {
	if o.FullLoadCPUPerRequest > 0 {
		return o.FullLoadCPUPerRequest
	}
	return o.ProbeCPUPerRequest
}

// MinShedForCost is the share of a step's answers that must be 503s
// before cpuPerShed derives a figure: the error in the served requests'
// cost is multiplied by served ÷ shed in it, so with 1 % shed a 2 µs
// error in a served request's cost becomes 200 µs per 503.
const MinShedForCost = 0.10

// cpuPerShed is what a 503 cost kvserver, derived: the overload step's
// CPU less its served requests at servedCPU each, over the 503s (only as
// good as servedCPU; negative where it was wrong). false where fewer than
// MinShedForCost of the answers were 503s, or a figure is missing.
func cpuPerShed(o *result.OverloadRun) (time.Duration, bool) {
	served := servedCPU(o)
	if o.Shed == 0 || float64(o.Shed) < MinShedForCost*float64(o.Shed+o.Served) || o.ServerCPU <= 0 || served <= 0 {
		return 0, false
	}
	return (o.ServerCPU - time.Duration(o.Served)*served) / time.Duration(o.Shed), true
}
