package analysis

import (
	"math"
	"slices"
	"time"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
)

// Metastable is the metastable preset's judgement: per client model,
// each variant's runs judged, and the configurations that came back
// quickly under every retrying client.
type Metastable struct {
	// BaseRate is the runs' base rate in front of the plan's store (each
	// model's own is its MetaModel's).
	BaseRate float64
	Models   []*MetaModel // those under which a variant ran
	// RecommendModels are the models a recommendation is held to: those
	// of the plan that retry (MetaRecommendModels), or the one population
	// given by client flags.
	RecommendModels []string
	// Recommended are the variants that met the recommendation's
	// criteria under every model of RecommendModels (recommended).
	Recommended []string
	// Versus is the default against each peer (plan.Peers), per model
	// under which both ran, in the plan's order.
	Versus []MetaVersus
	// Fits are whether the loader holds each client model's worst second
	// in front of the plan's store (metaFits; nil: nothing measured).
	// Sendable: it could send some model's spike's first tries, where it
	// ran (true where nothing was measured); where not, no run was made.
	Fits     []MetaFit
	Sendable bool
}

// MetaFit is a client model's ClientFit in front of the plan's store at
// the plan's spike and, where the storms were sized to the loader
// (plan.Metastable.SizeStorms), the store it ran in front of.
type MetaFit struct {
	ClientFit
	// Slots is the store its runs ran in front of (its slots; 0: none
	// ran); There its fit there, where that store is a smaller one (nil:
	// the plan's store, or not run).
	Slots int
	There *ClientFit
}

// MetaRecommendModels are the client models a recommended configuration
// must recover under: every one that retries (none is the classic
// client, which cannot amplify a spike).
var MetaRecommendModels = []string{"untuned", "retry", "backoff", "budget", "throttle"}

// MetaModel is one client model's variants, in the plan's order; a
// variant that did not run under it is left out.
type MetaModel struct {
	Name string
	// Slots is the store stand-in its runs ran in front of (0: the fast
	// store), BaseRate and SpikeRate what they asked of it.
	Slots               int
	BaseRate, SpikeRate float64
	Variants            []*MetaVariant
	// Lines are the chart's: per variant, in order, its first run's
	// useful goodput (answers/s) in each interval of the schedule
	// (Scheduled), at the interval's middle (seconds since the run
	// started; NaN where an interval has no length). A variant whose
	// first run recorded no series has none.
	Lines []Line
}

// Variant is m's variant named name (nil: none ran).
func (m *MetaModel) Variant(name string) *MetaVariant {
	return byName(m.Variants, name, func(v *MetaVariant) string { return v.Name })
}

// MetaVariant is one variant's runs under one model, judged.
type MetaVariant struct {
	Name string
	Runs []MetaJudged
	// JudgedRuns counts its runs whose client side kept up (Runs less
	// NotJudged); Outcome is what they add up to (a Spike* verdict).
	JudgedRuns int
	Outcome    Verdict
	Overloaded int // its runs the spike overloaded
	// Recovered and Collapsed count its runs that did; Recovery is the
	// median and range of the recovered runs' recovery times (seconds).
	Recovered, Collapsed int
	Recovery             Estimate
	// P99Back counts its runs whose useful p99 got back under
	// plan.MetaP99; P99 is when (seconds from the spike's end).
	P99Back int
	P99     Estimate
	// PeakAmplification, WastedShare and UnusedShare are the median over
	// its runs (NaN: unknown); Timeouts and Shed the mean of the runs'
	// totals.
	PeakAmplification, WastedShare, UnusedShare float64
	Timeouts, Shed                              int64
	// ServerShed is kvserver's 503s by reason, the mean over the runs
	// that read its counters (nil: none did).
	ServerShed map[string]int64
	// NotJudged counts its runs whose client side saturated or was not
	// recorded (MetaClient); the counts above are of the others. Client
	// is the first such run's client side, or the busiest judged one's.
	NotJudged int
	Client    MetaClient
	// Useful is the useful goodput over the whole run (answers to a
	// client still waiting, per second of the schedule) and UsefulShare
	// that over the first tries the schedule asked; UsefulP99 the useful
	// answers' p99 over the whole run: each the median over its judged
	// runs (NaN: none judged, or not recorded).
	Useful, UsefulShare float64
	UsefulP99           time.Duration
}

// A metastable variant's outcomes under one client model, the first
// that holds: none of its runs judged; one collapsed; the spike
// overloaded none (nothing to recover from); one recovered; else it
// neither recovered nor collapsed.
const (
	SpikeNotJudged Verdict = "spike-not-judged"
	SpikeCollapsed Verdict = "spike-collapsed"
	SpikeCalm      Verdict = "spike-not-overloaded"
	SpikeRecovered Verdict = "spike-recovered"
	SpikeNeither   Verdict = "spike-neither"
)

// MetaClient is a run's client side, judged from its series: only where
// the loader kept up is the storm the server saw the one the client model
// asked for.
type MetaClient struct {
	// Known: the series carries the loader's CPU and own lag (runs
	// recorded before they were kept carry neither).
	Known bool
	// Saturated: the client side ran out: its CPU share reached
	// plan.MetaClientShare (CPUBound) or its own lag passed plan.MetaOwnLag
	// in more than plan.MetaOwnLateIntervals intervals. CPUs is how many
	// the loader had.
	Saturated, CPUBound bool
	CPUs                int
	// PeakShare is the loader's highest CPU share in an interval, PeakAt
	// its start (seconds); OwnLate counts the intervals whose own send
	// lag p99 passed plan.MetaOwnLag; ConnWaits the attempts that waited
	// for a free connection.
	PeakShare, PeakAt float64
	OwnLate           int
	ConnWaits         int64
}

// MetaJudged is one run judged against the base rate.
type MetaJudged struct {
	// Client is the run's client side. A run whose client side saturated
	// or is unknown is not judged: Overloaded, Recovered, OnTarget,
	// Collapsed and P99Back stay false.
	Client MetaClient
	// Overloaded: over the spike, useful goodput averaged under
	// plan.MetaRecovered of the spike's rate, or the useful answers' p99
	// passed plan.MetaP99 in one of its intervals. A run the spike did
	// not overload has nothing to recover from.
	Overloaded bool
	// Recovered: useful goodput came back to plan.MetaRecovered of the
	// base rate and stayed there for the timing's Hold; RecoveryTime is
	// from the spike's end to the start of that hold.
	Recovered    bool
	RecoveryTime time.Duration
	// OnTarget: the same at plan.MetaTarget of the base rate (what a
	// recommended configuration is held to), TargetTime after the end.
	OnTarget   bool
	TargetTime time.Duration
	// Collapsed: over the run's last Hold, useful goodput averaged under
	// plan.MetaCollapsed of the base rate.
	Collapsed bool
	// PeakAmplification is the most attempts sent per first try in any
	// interval ((first tries + retries) ÷ first tries; 1: no retries),
	// of the intervals in which the loader sent at least half of the
	// first tries due.
	PeakAmplification float64
	// P99Back: the useful answers' p99 got back under plan.MetaP99 and
	// stayed there for Hold, P99Time after the spike's end.
	P99Back bool
	P99Time time.Duration
	// WastedShare is kvserver's operations run past their deadline ÷
	// those it ran (NaN: the clients sent no deadline). UnusedShare is
	// (ran − useful) ÷ ran (NaN: unknown): waste as the clients see it.
	WastedShare, UnusedShare float64
	// Useful is the run's useful goodput over its schedule (answers/s),
	// UsefulShare its useful answers over the first tries the schedule
	// asked; UsefulP99 the useful answers' p99 over the run (0: not
	// recorded).
	Useful, UsefulShare float64
	UsefulP99           time.Duration
}

// metastableOf judges c's metastable runs (nil: not that preset).
func metastableOf(c *result.Comparison) *Metastable {
	if c.Plan == nil || c.Plan.Metastable == nil || c.Metastable == nil {
		return nil
	}
	p, m := c.Plan.Metastable, c.Metastable
	out := &Metastable{BaseRate: m.BaseRate}
	for _, cm := range p.Models {
		mm := &MetaModel{Name: cm, Slots: p.Slots(), BaseRate: m.BaseRate, SpikeRate: m.SpikeRate}
		if size := m.Size(cm); size != nil {
			mm.Slots, mm.BaseRate, mm.SpikeRate = size.Slots, size.BaseRate, size.SpikeRate
		}
		for _, v := range p.Variants {
			if !p.Applies(cm, v) {
				continue
			}
			mv := &MetaVariant{Name: v.Name()}
			var runs []*result.MetaRun
			var first *Line
			for _, r := range m.Runs {
				if r.Model == cm && r.Variant == mv.Name {
					runs = append(runs, r)
					mv.Runs = append(mv.Runs, JudgeMetaRun(r, mm.BaseRate, p.Timing))
					if r.Repeat == 1 && len(r.Series) > 0 {
						first = usefulLine(mv.Name, r.Series, p.Timing)
					}
				}
			}
			if len(runs) == 0 {
				continue
			}
			if first != nil {
				mm.Lines = append(mm.Lines, *first)
			}
			summarise(mv, runs)
			mm.Variants = append(mm.Variants, mv)
		}
		if len(mm.Variants) > 0 {
			out.Models = append(out.Models, mm)
		}
	}
	for _, cm := range p.Models {
		if cm == plan.CustomModel || slices.Contains(MetaRecommendModels, cm) {
			out.RecommendModels = append(out.RecommendModels, cm)
		}
	}
	out.Recommended = recommended(out, p.Timing)
	out.Versus = versus(out, p)
	out.Fits, out.Sendable = metaFits(m, p)
	return out
}

// usefulLine is a run's useful goodput per interval of its schedule.
func usefulLine(name string, series []result.MetaPoint, t plan.MetaTiming) *Line {
	l := &Line{Name: name}
	for _, pt := range Scheduled(series, t) {
		y := math.NaN()
		if pt.Length > 0 {
			y = float64(pt.Useful) / pt.Length
		}
		l.X, l.Y = append(l.X, pt.T+pt.Length/2), append(l.Y, y)
	}
	return l
}

// metaFits are m's client side's fits (ClientFits) of p's models in front
// of p's store, and where p sized the storms, in front of the store each
// ran in front of; sendable tells whether some model's spike could be
// sent where it ran (true where nothing was measured).
func metaFits(m *result.Metastable, p *plan.Metastable) (fits []MetaFit, sendable bool) {
	at := ClientFits(m.ClientSide, p.Models, m.SpikeRate, p.Slots())
	if len(at) == 0 {
		return nil, true
	}
	for _, f := range at {
		mf := MetaFit{ClientFit: f}
		size := m.Size(f.Model)
		if size != nil {
			mf.Slots = size.Slots
		}
		switch {
		case !p.SizeStorms || size != nil && size.Slots == p.Slots():
			sendable = sendable || f.Sendable
		case size != nil:
			there := ClientFits(m.ClientSide, []string{f.Model}, size.SpikeRate, size.Slots)[0]
			mf.There, sendable = &there, sendable || there.Sendable
		}
		fits = append(fits, mf)
	}
	return fits, sendable
}

// summarise fills v's medians and counts from v.Runs, its totals from runs.
func summarise(v *MetaVariant, runs []*result.MetaRun) {
	var rec, p99, amp, wasted, unused, useful, share, runP99 []float64
	for _, j := range v.Runs {
		if !j.Judged() {
			if v.NotJudged == 0 {
				v.Client = j.Client
			}
			v.NotJudged++
		} else if v.NotJudged == 0 && j.Client.PeakShare >= v.Client.PeakShare {
			v.Client = j.Client
		}
		if j.Overloaded {
			v.Overloaded++
		}
		if j.P99Back {
			p99 = append(p99, j.P99Time.Seconds())
		}
		if j.Recovered {
			rec = append(rec, j.RecoveryTime.Seconds())
		}
		if j.Collapsed {
			v.Collapsed++
		}
		amp, wasted, unused = append(amp, j.PeakAmplification), appendKnown(wasted, j.WastedShare), appendKnown(unused, j.UnusedShare)
		if j.Judged() {
			useful, share, runP99 = append(useful, j.Useful), append(share, j.UsefulShare), append(runP99, float64(j.UsefulP99))
		}
	}
	v.Useful, v.UsefulShare, v.UsefulP99 = medianOrNaN(useful), medianOrNaN(share), medianCost(runP99)
	v.Recovery, v.P99, v.Recovered, v.P99Back = estimateOf(rec), estimateOf(p99), len(rec), len(p99)
	v.PeakAmplification, v.WastedShare, v.UnusedShare = medianOrNaN(amp), medianOrNaN(wasted), medianOrNaN(unused)
	read := int64(0)
	for _, r := range runs {
		v.Timeouts += r.Totals.Timeouts
		v.Shed += r.Totals.Shed
		if r.Server != nil {
			read++
			if v.ServerShed == nil {
				v.ServerShed = map[string]int64{}
			}
			for reason, k := range r.Server.Shed {
				v.ServerShed[reason] += k
			}
		}
	}
	v.JudgedRuns = len(v.Runs) - v.NotJudged
	switch {
	case v.JudgedRuns == 0:
		v.Outcome = SpikeNotJudged
	case v.Collapsed > 0:
		v.Outcome = SpikeCollapsed
	case v.Overloaded == 0:
		v.Outcome = SpikeCalm
	case v.Recovered > 0:
		v.Outcome = SpikeRecovered
	default:
		v.Outcome = SpikeNeither
	}
	n := int64(len(runs)) // never 0: metastableOf skips a variant with none
	v.Timeouts, v.Shed = v.Timeouts/n, v.Shed/n
	for reason := range v.ServerShed {
		v.ServerShed[reason] /= read
	}
}

func medianOrNaN(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return Median(xs)
}

// Judged: j's client side kept up, so its verdicts stand.
func (j MetaJudged) Judged() bool { return j.Client.Known && !j.Client.Saturated }

func clientSide(r *result.MetaRun, series []result.MetaPoint) MetaClient {
	c := MetaClient{Known: r.LoaderCPUs > 0 && len(series) > 0, CPUs: r.LoaderCPUs}
	for _, p := range series {
		c.ConnWaits += p.ConnWaits
		if p.LoaderShare < 0 {
			c.Known = false
		}
		if p.LoaderShare > c.PeakShare {
			c.PeakShare, c.PeakAt = p.LoaderShare, p.T
		}
		if p.OwnLagP99 > plan.MetaOwnLag {
			c.OwnLate++
		}
	}
	c.CPUBound = c.Known && c.PeakShare >= plan.MetaClientShare
	c.Saturated = c.CPUBound || c.Known && c.OwnLate > plan.MetaOwnLateIntervals
	return c
}

// JudgeMetaRun judges one run against base, the asked base rate, by t's
// spike and hold: its client side first (clientSide); the verdicts only
// where it kept up.
func JudgeMetaRun(r *result.MetaRun, base float64, t plan.MetaTiming) MetaJudged {
	series := Scheduled(r.Series, t)
	j := MetaJudged{Client: clientSide(r, series), PeakAmplification: 1, WastedShare: math.NaN(), UnusedShare: math.NaN()}
	end := t.SpikeEnd().Seconds()
	var useful int64
	for _, p := range series {
		useful += p.Useful
		// An interval in which the loader sent under half of the first
		// tries due (it fell behind, or the run ended in it) would
		// divide by a count the schedule did not set.
		due := base * p.Length
		if p.T >= t.Base.Seconds()-1e-9 && p.T < end-1e-9 {
			due *= t.Factor
		}
		if p.FirstTries > 0 && float64(p.FirstTries) >= due/2 {
			j.PeakAmplification = max(j.PeakAmplification, float64(p.FirstTries+p.Retries)/float64(p.FirstTries))
		}
	}
	j.Useful = float64(useful) / t.Duration().Seconds()
	if asked := base*(t.Base+t.After).Seconds() + base*t.Factor*t.Spike.Seconds(); asked > 0 {
		j.UsefulShare = float64(useful) / asked
	}
	j.UsefulP99 = r.Totals.UsefulP99
	if s := r.Server; s != nil && s.Ran > 0 {
		if s.DeadlineRequests > 0 {
			j.WastedShare = float64(s.Wasted) / float64(s.Ran)
		}
		j.UnusedShare = max(0, float64(s.Ran-r.Totals.Useful)) / float64(s.Ran)
	}
	if !j.Judged() {
		return j // its verdicts stay false
	}
	rate := func(p result.MetaPoint) float64 {
		if p.Length <= 0 {
			return 0
		}
		return float64(p.Useful) / p.Length
	}
	j.Overloaded = overloaded(series, base*t.Factor, t)
	// backTo is when useful goodput came back to share of the base and
	// held there (the tables' recovery, and the recommendation's target).
	backTo := func(share float64) (bool, time.Duration) {
		return heldFrom(series, end, t.Hold.Seconds(), func(p result.MetaPoint) bool { return rate(p) >= share*base })
	}
	j.Recovered, j.RecoveryTime = backTo(plan.MetaRecovered)
	j.OnTarget, j.TargetTime = backTo(plan.MetaTarget)
	j.P99Back, j.P99Time = heldFrom(series, end, t.Hold.Seconds(), func(p result.MetaPoint) bool {
		return p.Useful > 0 && p.UsefulP99 > 0 && p.UsefulP99 < plan.MetaP99
	})
	// The run's last Hold: useful goodput there, against the base.
	last := t.Duration().Seconds() - t.Hold.Seconds()
	j.Collapsed = usefulUnder(series, func(p result.MetaPoint) bool { return p.T >= last-1e-9 }, plan.MetaCollapsed*base)
	return j
}

// overloaded reports whether the spike (at spikeRate, within t's spike)
// overloaded the run whose series this is (see MetaJudged.Overloaded).
func overloaded(series []result.MetaPoint, spikeRate float64, t plan.MetaTiming) bool {
	const eps = 1e-9
	from, to := t.Base.Seconds(), t.SpikeEnd().Seconds()
	in := func(p result.MetaPoint) bool { return p.T >= from-eps && p.T+p.Length <= to+eps }
	return slices.ContainsFunc(series, func(p result.MetaPoint) bool { return in(p) && p.UsefulP99 >= plan.MetaP99 }) ||
		usefulUnder(series, in, plan.MetaRecovered*spikeRate)
}

// usefulUnder tells whether the useful goodput over the intervals of
// series that are in averaged under rate (false where none is).
func usefulUnder(series []result.MetaPoint, in func(result.MetaPoint) bool, rate float64) bool {
	var useful int64
	var length float64
	for _, p := range series {
		if in(p) {
			useful += p.Useful
			length += p.Length
		}
	}
	return length > 0 && float64(useful)/length < rate
}

// Scheduled is the part of series within the run's schedule (t's
// Duration): the loader's series goes on while the last attempts end
// (retries, answers to requests sent late), with no first tries due;
// judged or drawn, those seconds would count as the run's last.
func Scheduled(series []result.MetaPoint, t plan.MetaTiming) []result.MetaPoint {
	d := t.Duration().Seconds()
	for i, p := range series {
		if p.T >= d-1e-9 {
			return series[:i]
		}
	}
	return series
}

// heldFrom finds the first interval starting at or after from (seconds)
// from which ok holds for every interval covering hold seconds; it
// returns whether one was found and its start's distance from from. The
// hold must fit in the series: a run that came back in its last seconds,
// too late to show it stayed, has not recovered.
func heldFrom(series []result.MetaPoint, from, hold float64, ok func(result.MetaPoint) bool) (bool, time.Duration) {
	const eps = 1e-9
	for i, p := range series {
		if p.T < from-eps {
			continue
		}
		covered := 0.0
		for _, q := range series[i:] {
			if !ok(q) {
				break
			}
			covered += q.Length
			if covered >= hold-eps {
				return true, time.Duration((p.T - from) * float64(time.Second)).Round(time.Millisecond)
			}
		}
	}
	return false, 0
}

// recommended are the variants that, under every retrying model, ran,
// were overloaded by the spike, did not collapse, and in every run had
// their useful goodput back on target (plan.MetaTarget of the base, held)
// within t.Recovery and their p99 back under plan.MetaP99 as fast.
func recommended(m *Metastable, t plan.MetaTiming) []string {
	var names []string
	counts := map[string]int{}
	for _, mm := range m.Models {
		if !slices.Contains(m.RecommendModels, mm.Name) {
			continue
		}
		for _, v := range mm.Variants {
			good := v.NotJudged == 0 && v.Overloaded == len(v.Runs) && v.Collapsed == 0
			for _, j := range v.Runs {
				good = good && j.OnTarget && j.TargetTime <= t.Recovery && j.P99Back && j.P99Time <= t.Recovery
			}
			if good {
				indexOf(&names, v.Name)
				counts[v.Name]++
			}
		}
	}
	return slices.DeleteFunc(names, func(n string) bool { return counts[n] < len(m.RecommendModels) })
}

// MetaUsefulMargin and MetaP99Margin are how far apart the default's and
// a peer's useful goodput and useful p99 over the run must be before the
// default counts as keeping less or answering later: inside them a
// difference is noise. They are the spread of three quick runs of one
// variant on the 2-core VM (useful goodput up to 6.6 % apart under one
// client model, useful p99 up to 32 %), rounded down.
const (
	MetaUsefulMargin = 0.05
	MetaP99Margin    = 0.30
)

// MetaVersus is kvserver's default against a peer under one client
// model, where both ran: whether the default recovered no later, kept
// no less useful goodput over the run and no higher useful p99 over it
// (each the medians over their judged runs; less and higher only beyond
// MetaUsefulMargin and MetaP99Margin). Judged is false where either had
// no judged run; the verdicts are then false too.
type MetaVersus struct {
	Model, Peer    string
	Default, Other *MetaVariant
	Judged         bool
	// RecoveryNoLater: the default's recovery (0 where the spike did not
	// overload it: nothing to recover from) is no later than the peer's
	// (never, where it did not recover or collapsed). P99Known: both
	// useful p99s over the run were recorded (runs from before they were
	// have none), which P99NoHigher needs.
	RecoveryNoLater, UsefulNoLess, P99Known, P99NoHigher bool
	// UsefulRatio and P99Ratio are the default's useful goodput and
	// useful p99 over the peer's (NaN where either is unknown).
	UsefulRatio, P99Ratio float64
}

// versus is the default against each peer of p's variants, per model.
func versus(m *Metastable, p *plan.Metastable) []MetaVersus {
	var out []MetaVersus
	for _, mm := range m.Models {
		def := mm.Variant(plan.Default)
		for _, v := range p.Variants {
			if !v.Variant.IsPeer() || v.Deadlines {
				continue
			}
			other := mm.Variant(v.Name())
			if def == nil || other == nil {
				continue
			}
			vs := MetaVersus{Model: mm.Name, Peer: other.Name, Default: def, Other: other,
				UsefulRatio: overPeer(def.Useful, other.Useful), P99Ratio: overPeer(float64(def.UsefulP99), float64(other.UsefulP99))}
			vs.Judged = def.JudgedRuns > 0 && other.JudgedRuns > 0
			if vs.Judged {
				vs.RecoveryNoLater = recoveryOf(def) <= recoveryOf(other)
				vs.UsefulNoLess = def.Useful >= other.Useful*(1-MetaUsefulMargin)
				vs.P99Known = def.UsefulP99 > 0 && other.UsefulP99 > 0
				vs.P99NoHigher = vs.P99Known && float64(def.UsefulP99) <= float64(other.UsefulP99)*(1+MetaP99Margin)
			}
			out = append(out, vs)
		}
	}
	return out
}

// overPeer is def over peer, NaN where either is unknown (NaN, or not
// above 0).
func overPeer(def, peer float64) float64 {
	if !(def > 0) || !(peer > 0) {
		return math.NaN()
	}
	return def / peer
}

// recoveryOf is v's recovery in seconds for a comparison: 0 where the
// spike overloaded none of its judged runs, +Inf where it collapsed or
// did not recover in all of them, else the median recovery.
func recoveryOf(v *MetaVariant) float64 {
	switch {
	case v.Overloaded == 0:
		return 0
	case v.Collapsed > 0 || v.Recovered < v.JudgedRuns:
		return math.Inf(1)
	}
	return v.Recovery.Median
}
