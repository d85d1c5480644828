package analysis

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
)

// Writes is the writes preset's analysis: each variant's figures over
// its runs, and each variant but direct judged against direct in the
// same repetition by the targets of plan's Writes* constants.
type Writes struct {
	Variants   []*WritesVariant // the plan's order, direct first
	Judgements []*WritesJudgement
	// FloodSeconds are the read stream's intervals judged as the
	// flood's: those within [FloodAt, FloodAt+FloodFor) of the plan.
	FloodSeconds int
	// ReadP99, ReadOK, WriteOK and L0Sublevels are the charted figures:
	// the read stream's corrected p99 (ms) and answers a second, the
	// flood's answers a second, and Pebble's L0 sublevels. Each has a
	// line per variant that measured it: the median over its runs per
	// interval, at the interval's middle (seconds since the start); NaN
	// where none was measured.
	ReadP99, ReadOK, WriteOK, L0Sublevels []Line
	// DirectNoise is direct against itself by the p99 target's rule:
	// each of its judged runs against each other one, second by second
	// (Exceeded of Seconds). Nothing differs between them but the run, so
	// a variant's count near this one is this machine's noise, not the
	// variant.
	DirectNoise WritesTarget
}

// Variant is the variant named name (nil: none ran).
func (w *Writes) Variant(name string) *WritesVariant {
	return byName(w.Variants, name, func(v *WritesVariant) string { return v.Name })
}

// WritesVariant is one variant's runs and their figures: each the
// median over its runs with their range (N: how many runs gave it; the
// server's figures only where kvserver served the metric).
type WritesVariant struct {
	Name string
	Runs []*WritesFigures // by repetition
	// Reads: refused (503) and that share of the read stream's
	// responses; answered a second in the flood's worst second; the p99
	// in the flood's worst second and over the run (ms).
	ReadsRefused, RefusedShare, WorstReadRate, WorstReadP99, ReadP99 Estimate
	// Writes: answered (201) a second from the flood's start to its last
	// answer, refused (503), and their p99 (ms); AbsorbedGoodput the
	// answers a second from the flood's start until the store had
	// absorbed them (WritesFigures.AbsorbedAt; N: the runs that saw it).
	WriteGoodput, WritesRefused, WriteP99, AbsorbedGoodput Estimate
	// kvserver's: Pebble's write stalls and their seconds, its most L0
	// sublevels, the seconds its admission paced writes.
	Stalls, StallSeconds, L0Max, PacedSeconds Estimate
	// NotJudged counts its runs whose loader was the limit (WritesFigures.LoaderBound).
	NotJudged int
}

// WritesFigures are one run's figures.
type WritesFigures struct {
	Repeat int
	Run    *result.WritesRun
	// ReadsRefused are the read stream's 503s, RefusedShare of its
	// responses.
	ReadsRefused int64
	RefusedShare float64
	// WorstReadRate is the fewest reads answered a second in a flood
	// interval (WorstReadAt its start), WorstReadP99 the highest p99 of
	// one (WorstP99At its start); ReadP99 the read stream's over the run.
	WorstReadRate, WorstReadAt float64
	WorstReadP99               time.Duration
	WorstP99At                 float64
	ReadP99                    time.Duration
	// WriteGoodput is the flood's answers (201) a second, from its start
	// to its last answer; WritesRefused its 503s; WriteP99 its p99.
	WriteGoodput  float64
	WritesRefused int64
	WriteP99      time.Duration
	// AbsorbedAt is when kvserver's store had absorbed the flood, in
	// seconds since the read stream's start (result.AbsorbedAt), and
	// AbsorbedGoodput the flood's answers a second from its start to
	// then; NaN where the samples do not say (not served, or ended
	// first). Writes that a store took faster than it compacts them are
	// paid for after the flood: this is the rate it sustains.
	AbsorbedAt, AbsorbedGoodput float64
	// Stalls and StallSeconds are Pebble's write stalls over the run,
	// L0Max its most L0 sublevels, PacedSeconds how long the admission
	// paced writes; NaN where kvserver did not serve the metric.
	Stalls, StallSeconds, L0Max, PacedSeconds float64
	// AdmissionRejected is the admission's refusals over the run by
	// class ("read", "write"); nil where kvserver does not serve them.
	AdmissionRejected map[string]float64
	// Flood are the indices of the read series' flood intervals.
	Flood []int
	// LoaderBound: the loader, not kvserver, was the limit of the read
	// stream (judgeWritesLoader), for Why; the run is not judged.
	LoaderBound bool
	Why         WritesLoaderWhy
}

// WritesLoaderWhy is what made a run loader-bound: its read stream's
// own sends late (p99 over the run's lag tolerance) in OwnLate of
// Judged intervals, or the loader at the criteria's busy share of its
// CPUs in Busy of them (at most PeakShare), or the read stream behind
// its schedule (SendRate of Asked, Unsent never sent) with its
// connections free.
type WritesLoaderWhy struct {
	OwnLate, Busy, Judged int
	PeakShare             float64
	FellBehind            bool
	SendRate, Asked       float64
	Unsent                int64
}

// WritesJudgement is one variant against direct by the writes targets,
// over the repetitions both ran (Pairs), of which Judged had neither
// run loader-bound.
type WritesJudgement struct {
	Variant       string
	Pairs, Judged int
	// Refused: it refused no more reads than direct (no more than
	// plan.WritesRefusedShare of them where direct refused none).
	// P99: its read p99 within plan.WritesP99Factor × direct's, second by
	// second, in all but a share of the flood's seconds (Exceeded of
	// Seconds over the judged pairs, WorstExceeded in one pair). Stalls:
	// Pebble never stalled its writes. Goodput: its write goodput at
	// least plan.WritesGoodputShare of direct's.
	Refused, P99, Stalls, Goodput WritesTarget
	// Absorbed is each judged pair's AbsorbedGoodput over direct's, in
	// repetition order, where both runs saw their store absorb the flood.
	Absorbed []float64 `json:",omitempty"`
}

// WritesTarget is one target's verdict over the judged pairs: met where
// every one met it (Met of Of), not judged where none was judged
// (NotJudged says why).
type WritesTarget struct {
	Verdict           Verdict
	Met, Of           int
	Exceeded, Seconds int `json:",omitempty"`
	WorstExceeded     int `json:",omitempty"`
	// SecondsStalled are those of the Seconds in which Pebble held
	// direct's writes back for StalledShare of the second or more, and
	// ExceededStalled those of the Exceeded ones: direct's reads then had
	// kvserver to themselves, and were faster than beside writes that
	// flow.
	SecondsStalled, ExceededStalled int `json:",omitempty"`
	NotJudged                       WritesUnjudged
}

// WritesUnjudged is why a target was not judged.
type WritesUnjudged string

const (
	UnjudgedLoader    WritesUnjudged = "loader-bound"  // every pair had a loader-bound run
	UnjudgedNoDirect  WritesUnjudged = "no direct run" // direct ran in none of its repetitions
	UnjudgedNotServed WritesUnjudged = "not served"    // kvserver served no write stall counter
)

// The verdicts of a writes target.
const (
	TargetMet       Verdict = "met"
	TargetNotMet    Verdict = "not-met"
	TargetNotJudged Verdict = "not-judged"
)

// writesOf analyses c's writes runs (nil: not that preset).
func writesOf(c *result.Comparison) *Writes {
	if c.Plan == nil || c.Plan.Writes == nil || c.Writes == nil {
		return nil
	}
	p := c.Plan.Writes
	out := &Writes{}
	for _, v := range p.Variants {
		wv := &WritesVariant{Name: v.Name()}
		for _, r := range c.Writes.Runs {
			if r.Variant == wv.Name {
				wv.Runs = append(wv.Runs, WritesFiguresOf(r, p, c.Writes.LagTolerance, c.Criteria.LoaderBusy))
			}
		}
		if len(wv.Runs) == 0 {
			continue
		}
		wv.summarize()
		x, ys := writesSeriesOf(wv.Runs, p)
		for k, lines := range []*[]Line{&out.ReadP99, &out.ReadOK, &out.WriteOK, &out.L0Sublevels} {
			if slices.ContainsFunc(ys[k], func(y float64) bool { return !math.IsNaN(y) }) {
				*lines = append(*lines, Line{Name: wv.Name, X: x, Y: ys[k]})
			}
		}
		out.Variants = append(out.Variants, wv)
		out.FloodSeconds = max(out.FloodSeconds, len(wv.Runs[0].Flood))
	}
	base := out.Variant(plan.Baseline)
	for _, wv := range out.Variants {
		if wv.Name != plan.Baseline {
			out.Judgements = append(out.Judgements, JudgeWrites(wv, base))
		}
	}
	if base != nil {
		out.DirectNoise = p99Noise(base.Runs)
	}
	return out
}

// p99Noise counts, over every ordered pair of runs neither of which was
// loader-bound, the flood seconds in which the first's read p99 passed
// plan.WritesP99Factor × the second's (see Writes.DirectNoise).
func p99Noise(runs []*WritesFigures) WritesTarget {
	var t WritesTarget
	for i, a := range runs {
		for j, b := range runs {
			if i == j || a.LoaderBound || b.LoaderBound {
				continue
			}
			t.addSeconds(p99Exceeded(a, b))
		}
	}
	return t
}

// WritesFiguresOf is run r's figures under plan p: tol is how late the
// read stream's own sends may be (result.Writes.LagTolerance), busy the
// loader's CPU share at which it counts as out of CPU.
func WritesFiguresOf(r *result.WritesRun, p *plan.Writes, tol time.Duration, busy float64) *WritesFigures {
	f := &WritesFigures{Repeat: r.Repeat, Run: r, ReadsRefused: r.Reads.Shed, ReadP99: r.Reads.P99,
		WritesRefused: r.Writes.Shed, WriteP99: r.Writes.P99, WorstReadRate: math.NaN(), WorstReadAt: math.NaN(), WorstP99At: math.NaN(),
		AbsorbedAt: math.NaN(), AbsorbedGoodput: math.NaN()}
	if r.Reads.Responses > 0 {
		f.RefusedShare = float64(r.Reads.Shed) / float64(r.Reads.Responses)
	}
	if r.Writes.Elapsed > 0 && r.FloodEnd > r.FloodStart {
		f.WriteGoodput = float64(r.Writes.OK) / (r.FloodEnd - r.FloodStart)
		if at := result.AbsorbedAt(r.Server, r.FloodStart, r.FloodEnd); at > r.FloodStart {
			f.AbsorbedAt, f.AbsorbedGoodput = at, float64(r.Writes.OK)/(at-r.FloodStart)
		}
	}
	f.Flood = floodIntervals(r.ReadSeries, p)
	for _, i := range f.Flood {
		pt := r.ReadSeries[i]
		if rate := float64(pt.OK) / pt.Length; math.IsNaN(f.WorstReadRate) || rate < f.WorstReadRate {
			f.WorstReadRate, f.WorstReadAt = rate, pt.T
		}
		if math.IsNaN(f.WorstP99At) || pt.P99 > f.WorstReadP99 {
			f.WorstReadP99, f.WorstP99At = pt.P99, pt.T
		}
	}
	f.serverFigures(r.Server, p.Interval)
	f.Why = judgeWritesLoader(r, p, tol, busy)
	f.LoaderBound = f.Why.OwnLate > allowedWrites(f.Why.Judged) || f.Why.Busy > allowedWrites(f.Why.Judged) || f.Why.FellBehind
	return f
}

// floodIntervals are the indices of series' intervals that lie within
// the flood (FloodAt to FloodEnd, half an interval either side forgiven:
// the flood starts as its loader has connected, just after FloodAt).
func floodIntervals(series []result.WritesPoint, p *plan.Writes) []int {
	from, to := p.FloodAt.Seconds(), p.FloodEnd().Seconds()
	var out []int
	for i, pt := range series {
		if pt.Length > 0 && pt.T >= from-pt.Length/2 && pt.T+pt.Length <= to+pt.Length/2 {
			out = append(out, i)
		}
	}
	return out
}

// allowedWrites is how many of n judged intervals may fail a per-second
// rule: those beyond plan.WritesP99Seconds of them (of 20, 2).
func allowedWrites(n int) int { return int(float64(n)*(1-plan.WritesP99Seconds) + 1e-9) }

// judgeWritesLoader is the loader's evidence over r's read stream: its
// intervals within the run but the first (connections opening), those
// whose own send lag p99 passed tol and those in which the loader used
// busy or more of its CPUs; and whether the read stream fell behind its
// schedule while it had connections free. The loader's limit, not
// kvserver's, where the intervals exceed what the per-second rule
// forgives or it fell behind so.
func judgeWritesLoader(r *result.WritesRun, p *plan.Writes, tol time.Duration, busy float64) WritesLoaderWhy {
	w := WritesLoaderWhy{SendRate: r.ReadsSendRate, Asked: r.ReadsAsked, Unsent: r.ReadsUnsent}
	n := len(r.ReadSeries)
	if p.Interval > 0 {
		n = min(n, int(p.Duration/p.Interval))
	}
	for _, pt := range r.ReadSeries[min(1, n):n] {
		w.Judged++
		if pt.OwnLagP99 > tol {
			w.OwnLate++
		}
		if busy > 0 && pt.LoaderShare >= busy {
			w.Busy++
		}
		w.PeakShare = max(w.PeakShare, pt.LoaderShare)
	}
	behind := w.Asked > 0 && (w.SendRate < 0.99*w.Asked || w.Unsent > 0)
	w.FellBehind = behind && r.ReadConnWaits == 0
	return w
}

// serverFigures derives f's server figures from samples, taken every
// interval: counters over the run (the last sample less the first),
// gauges at their most, the seconds paced as the samples that found
// writes paced × interval. A metric absent from every sample stays NaN.
func (f *WritesFigures) serverFigures(samples []result.ServerSample, interval time.Duration) {
	f.Stalls, f.StallSeconds, f.L0Max, f.PacedSeconds = math.NaN(), math.NaN(), math.NaN(), math.NaN()
	if len(samples) == 0 {
		return
	}
	first, last := samples[0].Values, samples[len(samples)-1].Values
	delta := func(key string) float64 {
		b, ok := last[key]
		if !ok {
			return math.NaN()
		}
		return b - first[key]
	}
	f.Stalls, f.StallSeconds = delta(result.MetricWriteStalls), delta(result.MetricWriteStallSeconds)
	for _, s := range samples {
		if v, ok := s.Values[result.MetricL0Sublevels]; ok && (math.IsNaN(f.L0Max) || v > f.L0Max) {
			f.L0Max = v
		}
		if v, ok := s.Values[result.MetricWritePaced]; ok {
			if math.IsNaN(f.PacedSeconds) {
				f.PacedSeconds = 0
			}
			if v >= 0.5 {
				f.PacedSeconds += interval.Seconds()
			}
		}
	}
	for key := range last {
		name, labels := result.SeriesOf(key)
		if name != result.MetricAdmissionRejected {
			continue
		}
		if f.AdmissionRejected == nil {
			f.AdmissionRejected = map[string]float64{}
		}
		f.AdmissionRejected[labelValue(labels, "class")] += delta(key)
	}
}

// labelValue is label's value in labels, Prometheus's text form
// (class="read",reason="queue"); "" where absent.
func labelValue(labels, label string) string {
	for _, kv := range strings.Split(labels, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok && k == label {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

// summarize sets wv's figures over its runs.
func (wv *WritesVariant) summarize() {
	var refused, share, worst, worstP99, p99, goodput, wrefused, wp99, absorbed, stalls, stallSecs, l0, paced []float64
	for _, f := range wv.Runs {
		if f.LoaderBound {
			wv.NotJudged++
		}
		refused, share = append(refused, float64(f.ReadsRefused)), append(share, f.RefusedShare)
		worst, worstP99, p99 = appendKnown(worst, f.WorstReadRate), append(worstP99, ms(f.WorstReadP99)), append(p99, ms(f.ReadP99))
		goodput, wrefused, wp99 = append(goodput, f.WriteGoodput), append(wrefused, float64(f.WritesRefused)), append(wp99, ms(f.WriteP99))
		absorbed = appendKnown(absorbed, f.AbsorbedGoodput)
		stalls, stallSecs = appendKnown(stalls, f.Stalls), appendKnown(stallSecs, f.StallSeconds)
		l0, paced = appendKnown(l0, f.L0Max), appendKnown(paced, f.PacedSeconds)
	}
	wv.ReadsRefused, wv.RefusedShare, wv.WorstReadRate = estimateOf(refused), estimateOf(share), estimateOf(worst)
	wv.WorstReadP99, wv.ReadP99 = estimateOf(worstP99), estimateOf(p99)
	wv.WriteGoodput, wv.WritesRefused, wv.WriteP99, wv.AbsorbedGoodput = estimateOf(goodput), estimateOf(wrefused), estimateOf(wp99), estimateOf(absorbed)
	wv.Stalls, wv.StallSeconds, wv.L0Max, wv.PacedSeconds = estimateOf(stalls), estimateOf(stallSecs), estimateOf(l0), estimateOf(paced)
}

func appendKnown(xs []float64, x float64) []float64 {
	if math.IsNaN(x) {
		return xs
	}
	return append(xs, x)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// writesSeriesOf is the median over runs of each charted figure (ys, in
// Writes' order) per interval of p's run, at x: a point whose start is
// within half an interval of interval i's counts in i (the flood's series
// starts just after FloodAt, kvserver's samples just after each second).
func writesSeriesOf(runs []*WritesFigures, p *plan.Writes) (x []float64, ys [4][]float64) {
	iv := p.Interval.Seconds()
	if iv <= 0 {
		return nil, ys
	}
	n := int(math.Ceil(p.Duration.Seconds() / iv))
	at := func(t float64) int { return int(math.Round(t / iv)) }
	cols := make([][4][]float64, n)
	add := func(i, k int, x float64) {
		if i >= 0 && i < n && !math.IsNaN(x) {
			cols[i][k] = append(cols[i][k], x)
		}
	}
	for _, f := range runs {
		for _, pt := range f.Run.ReadSeries {
			if pt.Length <= 0 {
				continue
			}
			if pt.Responses > 0 {
				add(at(pt.T), 0, ms(pt.P99))
			}
			add(at(pt.T), 1, float64(pt.OK)/pt.Length)
		}
		for _, pt := range f.Run.WriteSeries {
			if pt.Length > 0 {
				add(at(pt.T), 2, float64(pt.OK)/pt.Length)
			}
		}
		for _, s := range f.Run.Server {
			if v, ok := s.Values[result.MetricL0Sublevels]; ok {
				add(at(s.T), 3, v)
			}
		}
	}
	for i := range n {
		x = append(x, (float64(i)+0.5)*iv)
		for k := range ys {
			y := math.NaN()
			if len(cols[i][k]) > 0 {
				y = Median(cols[i][k])
			}
			ys[k] = append(ys[k], y)
		}
	}
	return x, ys
}

// JudgeWrites judges variant v against direct (base; nil: direct ran
// no run) by the writes targets, pairing their runs by repetition; a
// pair with a loader-bound run is not judged.
func JudgeWrites(v, base *WritesVariant) *WritesJudgement {
	j := &WritesJudgement{Variant: v.Name}
	var refused, p99, stalls, goodput []bool
	for _, f := range v.Runs {
		if base == nil {
			break
		}
		i := slices.IndexFunc(base.Runs, func(x *WritesFigures) bool { return x.Repeat == f.Repeat })
		if i < 0 {
			continue
		}
		b := base.Runs[i]
		j.Pairs++
		if f.LoaderBound || b.LoaderBound {
			continue
		}
		j.Judged++
		if b.ReadsRefused == 0 {
			refused = append(refused, f.RefusedShare <= plan.WritesRefusedShare)
		} else {
			refused = append(refused, f.ReadsRefused <= b.ReadsRefused)
		}
		pair := p99Exceeded(f, b)
		j.P99.addSeconds(pair)
		j.P99.WorstExceeded = max(j.P99.WorstExceeded, pair.Exceeded)
		p99 = append(p99, pair.Exceeded <= allowedWrites(pair.Seconds))
		if !math.IsNaN(f.Stalls) {
			stalls = append(stalls, f.Stalls == 0)
		}
		goodput = append(goodput, f.WriteGoodput >= plan.WritesGoodputShare*b.WriteGoodput)
		if !math.IsNaN(f.AbsorbedGoodput) && !math.IsNaN(b.AbsorbedGoodput) {
			j.Absorbed = append(j.Absorbed, f.AbsorbedGoodput/b.AbsorbedGoodput)
		}
	}
	why := UnjudgedLoader
	if j.Pairs == 0 {
		why = UnjudgedNoDirect
	}
	j.Refused, j.P99, j.Goodput = verdictOf(j.Refused, refused, why), verdictOf(j.P99, p99, why), verdictOf(j.Goodput, goodput, why)
	if j.Judged > 0 && len(stalls) == 0 {
		why = UnjudgedNotServed
	}
	j.Stalls = verdictOf(j.Stalls, stalls, why)
	return j
}

// p99Exceeded counts, of the flood intervals in which both f and b
// answered reads (Seconds), those in which f's read p99 passed
// plan.WritesP99Factor × b's (Exceeded); and of each, those in which
// Pebble held b's writes back for StalledShare of the interval or more.
func p99Exceeded(f, b *WritesFigures) (t WritesTarget) {
	for _, i := range f.Flood {
		if i >= len(b.Run.ReadSeries) {
			continue
		}
		x, y := f.Run.ReadSeries[i], b.Run.ReadSeries[i]
		if x.Responses == 0 || y.Responses == 0 {
			continue
		}
		t.Seconds++
		held := stallSecondsIn(b.Run.Server, y.T, y.T+y.Length) >= StalledShare*y.Length
		if held {
			t.SecondsStalled++
		}
		if float64(x.P99) > plan.WritesP99Factor*float64(y.P99) {
			t.Exceeded++
			if held {
				t.ExceededStalled++
			}
		}
	}
	return t
}

// addSeconds adds o's counts of seconds (judged, over, stalled) to t's.
func (t *WritesTarget) addSeconds(o WritesTarget) {
	t.Seconds += o.Seconds
	t.Exceeded += o.Exceeded
	t.SecondsStalled += o.SecondsStalled
	t.ExceededStalled += o.ExceededStalled
}

// StalledShare is the share of an interval in which Pebble held writes
// back that makes it a stalled one: nearly all of it, so that the
// writes hardly flowed.
const StalledShare = 0.9

// stallSecondsIn is how long Pebble held writes back between t0 and t1
// (seconds since the read stream's start), by the stall seconds counter
// of the first samples at or after each; 0 where the samples do not say.
func stallSecondsIn(samples []result.ServerSample, t0, t1 float64) float64 {
	at := func(t float64) (float64, bool) {
		for _, s := range samples {
			if s.T >= t {
				v, ok := s.Values[result.MetricWriteStallSeconds]
				return v, ok
			}
		}
		return 0, false
	}
	a, ok0 := at(t0)
	b, ok1 := at(t1)
	if !ok0 || !ok1 {
		return 0
	}
	return b - a
}

// verdictOf is t with the verdict of its pairs' outcomes: met where all
// met, not met where one did not, not judged (why) where none was judged.
func verdictOf(t WritesTarget, met []bool, why WritesUnjudged) WritesTarget {
	t.Of = len(met)
	for _, m := range met {
		if m {
			t.Met++
		}
	}
	switch {
	case t.Of == 0:
		t.Verdict, t.NotJudged = TargetNotJudged, why
	case t.Met == t.Of:
		t.Verdict = TargetMet
	default:
		t.Verdict = TargetNotMet
	}
	return t
}
