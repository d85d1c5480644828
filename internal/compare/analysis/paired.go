package analysis

import (
	"math"
	"time"

	"github.com/kvpool/kvpool/internal/compare/result"
	ratios "github.com/kvpool/kvpool/internal/ratio"
)

// Paired is what a variant's closed-loop rounds paired with direct's
// make: each measure's ratio to direct with its 95 % interval, the
// median of the pairs' ratios (ratios.Paired).
type Paired struct {
	Conns int
	Pairs int // how many ran
	// BaseRate and Rate are the medians of direct's and the variant's
	// rounds (answers without error per second); CPUPerRequest the
	// variant's kvserver CPU per request, the median of its rounds.
	BaseRate, Rate float64
	CPUPerRequest  time.Duration
	// Throughput is the variant's served rate over direct's, CPU its
	// kvserver CPU per request over direct's (N: the pairs with both
	// figures known).
	Throughput, CPU ratios.Interval
	// LoaderBound: a round of either side was, so the throughput ratio
	// compares nothing of kvserver's and is not ranked.
	LoaderBound bool
}

// PairedOf is Paired of pr's pairs.
func PairedOf(pr *result.PairedRun) *Paired {
	p := &Paired{Conns: pr.Conns, Pairs: min(len(pr.Base), len(pr.Variant))}
	var bRate, vRate, bCPU, vCPU []float64
	for i := range p.Pairs {
		b, v := pr.Base[i], pr.Variant[i]
		bRate, vRate = append(bRate, b.Served()), append(vRate, v.Served())
		bCPU, vCPU = append(bCPU, float64(b.ServerCPUPerRequest)), append(vCPU, float64(v.ServerCPUPerRequest))
		p.LoaderBound = p.LoaderBound || b.LoaderBound || v.LoaderBound
	}
	p.BaseRate, p.Rate = Median(bRate), Median(vRate)
	p.CPUPerRequest = medianCost(vCPU)
	// The slices are of one length: Paired cannot fail here.
	p.Throughput, _ = ratios.Paired(bRate, vRate)
	p.CPU, _ = ratios.Paired(bCPU, vCPU)
	return p
}

// PairedByOrder is PairedOf over the pairs that ran direct's round first
// and over those that ran the variant's first: where the two differ, the
// position in a pair moves a round. A run that did not alternate has no
// second half (Pairs 0).
func PairedByOrder(pr *result.PairedRun) (directFirst, variantFirst *Paired) {
	var halves [2]result.PairedRun
	for i := range min(len(pr.Base), len(pr.Variant)) {
		h := 0
		if pr.Alternating && result.PairOrder(i + 1)[0] == 1 {
			h = 1
		}
		halves[h].Base, halves[h].Variant = append(halves[h].Base, pr.Base[i]), append(halves[h].Variant, pr.Variant[i])
	}
	return PairedOf(&halves[0]), PairedOf(&halves[1])
}

// pairedOf is v's Paired, nil where it ran no pairs.
func pairedOf(v *result.VariantResult) *Paired {
	if v.Paired == nil || len(v.Paired.Base) == 0 {
		return nil
	}
	return PairedOf(v.Paired)
}

// pairedVerdict is what an interval says: Above or Below 1 where it
// excludes 1 (ratio.Differs), else NoDifference (it includes 1, or is
// unbounded: too few pairs).
func pairedVerdict(iv ratios.Interval) Verdict {
	switch {
	case !iv.Differs():
		return NoDifference
	case iv.Lo > 1:
		return Above
	}
	return Below
}

// intervalFigure is iv as a figure: its verdict pairedVerdict's, but
// NoPairs where no pair had both figures and Unbounded where too few
// pairs bound no interval.
func intervalFigure(of string, name Measure, iv ratios.Interval) Figure {
	x := Figure{Of: of, Name: name, Value: iv.Median, Interval: &Interval{Lo: iv.Lo, Hi: iv.Hi, N: iv.N, Level: ratios.Confidence}, Verdict: pairedVerdict(iv)}
	switch {
	case math.IsNaN(iv.Median):
		x.Verdict = NoPairs
	case !iv.Finite():
		x.Verdict = Unbounded
	}
	return x
}

// pairedFindings is one finding per measure (throughput, server CPU per
// request) and verdict (pairedVerdict; a loader-bound throughput
// NotRanked), each variant with its ratio figure.
func pairedFindings(w *Workload) []Finding {
	var out []Finding
	for _, m := range []struct {
		kind Kind
		name Measure
		of   func(*Paired) ratios.Interval
	}{{PairedThroughput, ThroughputRatio, func(p *Paired) ratios.Interval { return p.Throughput }},
		{PairedCPU, CPURatio, func(p *Paired) ratios.Interval { return p.CPU }}} {
		by := byVerdict(m.kind, w.Name, Above, Below, NoDifference, NotRanked)
		for _, x := range w.Variants {
			if p := x.Paired; p != nil {
				iv := m.of(p)
				verdict := pairedVerdict(iv)
				if m.kind == PairedThroughput && p.LoaderBound {
					verdict = NotRanked
				}
				by.add(verdict, x.Name, intervalFigure(x.Name, m.name, iv))
			}
		}
		out = append(out, named(by...)...)
	}
	return out
}

// pairedWidths are the narrowest and widest half-widths (ratio.HalfWidth,
// a share of the median) of w's paired intervals, both measures (N: how
// many are bounded).
func pairedWidths(w *Workload) Interval {
	out := Interval{Lo: math.Inf(1)}
	for _, v := range w.Variants {
		if v.Paired == nil {
			continue
		}
		for _, iv := range []ratios.Interval{v.Paired.Throughput, v.Paired.CPU} {
			if iv.Finite() {
				out.Lo, out.Hi, out.N = min(out.Lo, iv.HalfWidth()), max(out.Hi, iv.HalfWidth()), out.N+1
			}
		}
	}
	return out
}
