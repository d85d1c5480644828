package analysis

import (
	"math"

	"github.com/kvpool/kvpool/internal/compare/result"
	ratios "github.com/kvpool/kvpool/internal/ratio"
)

// What a floor's rounds must show for its ratios to compare the servers.
const (
	// FloorSustained is the share of the asked rate every round must
	// answer for the two servers to count as measured at the same load.
	FloorSustained = 0.97
	// FloorServerBusy is the median CPU share below which a closed loop
	// did not keep a server busy: it waited (fsync), or another process
	// took its CPU. At a rate the servers idle by design: not judged.
	FloorServerBusy = 0.85
)

// FloorWorkload is what one store state and workload's rounds give:
// kvserver's over the base's, paired (Throughput, CPU; LoaderBound: a
// round was, so a closed loop's throughput is not judged), and each
// side's medians.
type FloorWorkload struct {
	*Paired
	Sides    [2]*Closed   // the base's, kvserver's
	CPURange [2]*Interval // of their rounds' CPU per request (ns)
	// LoaderMax is the loader's highest CPU share in a round; LeastBusy
	// the lower of the servers' median CPU shares, Idle that it was under
	// FloorServerBusy in a closed loop; Answered, at a rate, the least
	// share of it a round answered, Behind that it was under
	// FloorSustained.
	LoaderMax, LeastBusy, Answered float64
	Idle, Behind                   bool
	Failed                         int64 // requests, every round of both
}

// FloorWorkloadOf is w's figures; f says at which rate it ran.
func FloorWorkloadOf(f *result.Floor, w *result.FloorWorkload) *FloorWorkload {
	a := &FloorWorkload{Paired: PairedOf(&w.PairedRun)}
	for i, rounds := range [2][]result.ClosedRound{w.Base, w.Variant} {
		a.Sides[i] = closedOf(&result.VariantResult{Closed: &result.ClosedRun{Rounds: rounds}})
		var cpu []float64
		for _, r := range rounds {
			cpu, a.LoaderMax = append(cpu, float64(r.ServerCPUPerRequest)), max(a.LoaderMax, r.Loader.Share)
		}
		a.CPURange[i] = spanOf(cpu)
		for _, n := range w.Failed[i] {
			a.Failed += n
		}
	}
	a.LeastBusy = min(a.Sides[0].Server.Share, a.Sides[1].Server.Share)
	a.Idle = f.Options.Rate == 0 && a.LeastBusy < FloorServerBusy
	if rate := f.Options.Rate; rate > 0 {
		a.Answered = min(a.Sides[0].Rate.Lo, a.Sides[1].Rate.Lo) / rate
		a.Behind = a.Answered < FloorSustained
	}
	return a
}

// FloorFigures are a floor's: per server CPU count its workloads', and,
// for more than one count, a row per count for each workload of the
// first.
type FloorFigures struct {
	Counts  [][]*FloorWorkload
	Scaling [][]FloorScale
}

// FloorScale is one count's row of a workload's scaling: each side's
// median throughput and it over its own at the first count, and
// kvserver's scaling over the base's (scalingRatio); LoaderBound here or
// at the first count.
type FloorScale struct {
	CPUs        int
	Rates       [2]float64
	Scale       [2]float64
	Ratio       ratios.Interval
	LoaderBound bool
}

// FloorOf is f's figures.
func FloorOf(f *result.Floor) *FloorFigures {
	a := &FloorFigures{}
	for _, c := range f.Counts {
		var ws []*FloorWorkload
		for _, w := range c.Workloads {
			ws = append(ws, FloorWorkloadOf(f, w))
		}
		a.Counts = append(a.Counts, ws)
	}
	if len(a.Counts) < 2 {
		return a
	}
	for k := range a.Counts[0] {
		first, rows := a.Counts[0][k], []FloorScale(nil)
		for c, ws := range a.Counts {
			if k >= len(ws) { // that count did not finish
				break
			}
			s, r := ws[k], FloorScale{CPUs: f.Counts[c].CPUs, Ratio: scalingRatio(first.Throughput, ws[k].Throughput)}
			for i := range r.Rates {
				r.Rates[i] = s.Sides[i].Rate.Median
				r.Scale[i] = r.Rates[i] / first.Sides[i].Rate.Median
			}
			r.LoaderBound = s.LoaderBound || first.LoaderBound
			rows = append(rows, r)
		}
		a.Scaling = append(a.Scaling, rows)
	}
	return a
}

// scalingRatio is later's paired ratio over first's. The two were
// measured apart, not in pairs, so its interval joins theirs end to end
// (the lower end of one over the upper end of the other): wider than
// either, as it must be.
func scalingRatio(first, later ratios.Interval) ratios.Interval {
	iv := ratios.Interval{Median: later.Median / first.Median, N: min(later.N, first.N), Lo: math.Inf(-1), Hi: math.Inf(1)}
	if later.Finite() && first.Finite() {
		iv.Lo, iv.Hi = later.Lo/first.Hi, later.Hi/first.Lo
	}
	return iv
}
