package verdict

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/kvpool/kvpool/internal/ratio"
)

// Lead is the finding about which pool is best on one measure (say
// saturation rate over -repeat runs), and whether the numbers support
// calling it best.
type Lead struct {
	// Best and RunnerUp are the pools with the best and second-best
	// median.
	Best, RunnerUp string
	// BestMedian and RunnerUpMedian are their medians.
	BestMedian, RunnerUpMedian float64
	// Clear is true when the best's lead exceeds the spread: every run of
	// the best is better than every run of the runner-up (their ranges do
	// not overlap), and each has at least two runs. Otherwise it is a tie.
	Clear bool
	// Tied are the pools whose range of runs overlaps the best's (the
	// best included), best median first; only Best when Clear; Best and
	// RunnerUp when either has a single run.
	Tied []string
	// Reason says it in words for the report, e.g. "lifo leads: median
	// 21200 against fifo's 20300, and its worst run (21000) beats fifo's
	// best (20500)" or "tie: lifo, fifo and msqueue overlap (lifo median
	// 21300, range 21000…21600 over 3 runs; ...)".
	Reason string
}

// FindLead picks the best pool from samples (pool → one value per run;
// higherIsBetter for rates, not latencies) and decides whether its lead
// is clear: the best's worst run beats the runner-up's best, with at
// least two runs each (one run has no spread to compare with). Equal
// medians are a tie. Fewer than two pools, a pool without runs, or a
// value NaN or infinite is an error.
func FindLead(samples map[string][]float64, higherIsBetter bool) (Lead, error) {
	if len(samples) < 2 {
		return Lead{}, fmt.Errorf("finding a lead needs at least two pools, got %d", len(samples))
	}
	type pool struct {
		name           string
		median, lo, hi float64
		n              int
		// worst and bestValue are lo and hi, or hi and lo where lower
		// is better.
		worst, bestValue float64
	}
	pools := make([]pool, 0, len(samples))
	for name, vs := range samples {
		if len(vs) == 0 {
			return Lead{}, fmt.Errorf("pool %q has no runs; leave it out or measure it", name)
		}
		sorted := append([]float64(nil), vs...)
		for _, v := range sorted {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return Lead{}, fmt.Errorf("pool %q has run value %v; pass finite numbers", name, v)
			}
		}
		sort.Float64s(sorted)
		p := pool{name: name, median: ratio.Median(sorted), lo: sorted[0], hi: sorted[len(sorted)-1], n: len(sorted)}
		if higherIsBetter {
			p.worst, p.bestValue = p.lo, p.hi
		} else {
			p.worst, p.bestValue = p.hi, p.lo
		}
		pools = append(pools, p)
	}
	better := func(a, b float64) bool {
		if higherIsBetter {
			return a > b
		}
		return a < b
	}
	sort.Slice(pools, func(i, j int) bool {
		if pools[i].median != pools[j].median {
			return better(pools[i].median, pools[j].median)
		}
		return pools[i].name < pools[j].name
	})
	best, second := pools[0], pools[1]
	l := Lead{Best: best.name, RunnerUp: second.name, BestMedian: best.median, RunnerUpMedian: second.median}

	// Pools whose range overlaps the best's: their best run reaches the
	// best pool's worst.
	for _, p := range pools {
		if p.name == best.name || !better(best.worst, p.bestValue) {
			l.Tied = append(l.Tied, p.name)
		}
	}
	rng := func(p pool) string {
		if p.n == 1 {
			return fmt.Sprintf("%s %s, 1 run", p.name, num(p.median))
		}
		return fmt.Sprintf("%s median %s, range %s…%s over %d runs", p.name, num(p.median), num(p.lo), num(p.hi), p.n)
	}
	switch {
	case best.n < 2 || second.n < 2:
		l.Tied = []string{best.name, second.name}
		l.Reason = fmt.Sprintf("tie: one run, no spread to compare the difference with (%s; %s)", rng(best), rng(second))
	case best.median == second.median:
		l.Reason = fmt.Sprintf("tie: equal medians (%s; %s)", rng(best), rng(second))
	case len(l.Tied) > 1:
		var parts []string
		for _, p := range pools {
			for _, t := range l.Tied {
				if p.name == t {
					parts = append(parts, rng(p))
				}
			}
		}
		l.Reason = fmt.Sprintf("tie: %s overlap (%s)", joinNames(l.Tied), strings.Join(parts, "; "))
	default:
		l.Clear = true
		l.Reason = fmt.Sprintf("%s leads: median %s against %s's %s, and its worst run (%s) beats %s's best (%s)",
			best.name, num(best.median), second.name, num(second.median), num(best.worst), second.name, num(second.bestValue))
	}
	return l, nil
}

// num writes a measured value for a sentence: whole numbers from 100 up
// (rates), three significant digits below (milliseconds).
func num(v float64) string {
	if math.Abs(v) >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// joinNames writes "a", "a and b", "a, b and c".
func joinNames(ns []string) string {
	switch len(ns) {
	case 0:
		return ""
	case 1:
		return ns[0]
	}
	return strings.Join(ns[:len(ns)-1], ", ") + " and " + ns[len(ns)-1]
}
