package analysis

import "slices"

// Kind is what a finding is about. Each kind's comment says which
// variants it names, which figures it carries and which verdicts it
// reaches; the report has a sentence for each.
type Kind string

// The kinds of finding, in the order a workload's findings come.
const (
	// SearchCapped: Variants passed the search's highest rate, so no
	// saturation was found and nothing is ranked. Verdict NotRanked.
	SearchCapped Kind = "search-capped"
	// SaturationLowerBound: Variants' searches were loader-bound; each
	// has a Saturation figure (its median) and, where known, LoaderCPUs.
	// Verdict NotRanked.
	SaturationLowerBound Kind = "saturation-lower-bound"
	// SaturationUnvalidated: Variants none of whose searches held over
	// its validation, each with its Bracket (the median of its searches'
	// brackets; Value Lo). Verdict NotRanked.
	SaturationUnvalidated Kind = "saturation-unvalidated"
	// SaturationLead: Variants the best and the runner-up by median, each
	// with its Saturation, and the runner-up's SatRatio to the best,
	// paired by repeat (Note: in words). Verdict Clear where its 95 %
	// interval lies below 1, else Tie.
	SaturationLead Kind = "saturation-lead"
	// SaturationVsDirect: Variants each with its Saturation and its
	// SatRatio to direct's, paired by repeat. Verdict Above or Below
	// where their 95 % intervals exclude 1, else Tied.
	SaturationVsDirect Kind = "saturation-vs-direct"
	// CrossCheck: direct's (Variants[0]) open-loop Saturation against
	// its ClosedRate over Conns; for Below and Above, Difference (%).
	// Verdict SatLowerBound, ClosedLowerBound (Note: why), Within, Below
	// or Above. Where both sides' CPU is known, what accounts for the
	// ratio (throughput = CPUs busy ÷ CPU per request): CPUPerRequest,
	// ServerBusy, ClosedCPUPerRequest, ClosedServerBusy, the factors
	// UtilisationRatio (open over closed) and CostRatio (closed over open)
	// of OpenOverClosed (IdleMost where utilisation is the smaller factor,
	// so idle CPU accounts for more of a shortfall than cost, else
	// CostMost), and what they leave Unexplained (the medians being of
	// different runs).
	CrossCheck Kind = "cross-check"
	// PairedThroughput and PairedCPU: the variants' ThroughputRatio or
	// CPURatio to direct from paired closed-loop rounds. Verdict Above
	// or Below where the 95 % interval excludes 1, else NoDifference;
	// NotRanked for a throughput measured in a loader-bound round.
	PairedThroughput Kind = "paired-throughput"
	PairedCPU        Kind = "paired-cpu"
	// FixedErrors: Variants whose fixed-rate step failed more than the
	// searches allow, each with its ErrorRate. Verdict NotComparable.
	FixedErrors Kind = "fixed-errors"
	// FixedBehind: Variants whose fixed-rate step did not keep up
	// (keptUp), each with its AchievedShare (%; Text: how it fell
	// behind). Verdict NotComparable.
	FixedBehind Kind = "fixed-behind"
	// ConcurrencyBound: a variant (Variants[0]) held back by its workers
	// waiting on a slow store: its Saturation, ConcurrencyLimit, Workers,
	// IODelay, ShareOfBound, BelowDirect, and the workload's
	// DirectSaturation. Verdict Bound.
	ConcurrencyBound Kind = "concurrency-bound"
	// ProfileGrowth: a variant (Variants[0]) saturating below direct
	// (paired by repeat), with Loss and the function its CPU diff grows
	// most: TopFunction (Text; Value its flat share, %) and TopFlat
	// (Text). Verdict Below.
	ProfileGrowth Kind = "profile-growth"
)

// The overload step's kinds.
const (
	// OverloadLowerBound: direct's saturation, which set the asked rate,
	// was a lower bound; Factor. Verdict LowerBound.
	OverloadLowerBound Kind = "overload-lower-bound"
	// OverloadLoaderBehind: the loader sent only part of what was
	// planned: Variants with SentShare (%); Variants' ServedP99FromSend
	// figures, each Within or Over the SLO figure. Verdict Behind.
	OverloadLoaderBehind Kind = "overload-loader-behind"
	// OverloadSLO: each variant's corrected ServedP99, Within or Over the
	// SLO figure. Verdict SomeWithin or NoneWithin.
	OverloadSLO Kind = "overload-slo"
	// OverloadGoodput: each variant's Goodput, Shed or Kept; per group
	// (Of GroupShed, GroupKept) the range of Goodput, of GoodputVsDirect
	// where direct served, and of ShedPct. Verdict Ranged.
	OverloadGoodput Kind = "overload-goodput"
	// DefaultsTargets: the pools at kvserver's defaults against their
	// targets (docs/load-lab.md). Per variant GoodputVsSat (Met or Missed
	// the floor), GoodputVsDirect where direct served, ServedP99FromSend
	// (Met where among the best); the workload's DirectSaturation
	// (LowerBound where it is one), DirectServedP99FromSend, Floor and
	// Best (Met, Missed), BestP99, and Lowest and Highest. Verdict Met
	// where Floor and Best are.
	DefaultsTargets Kind = "defaults-targets"
	// ShedCost: what a 503 cost against a served request (ShedCostRatio
	// per variant that shed; its range Of ""), Variants the lowest and
	// highest. Verdict Derived, or NotDerivable where the lowest is ≤ 0.
	ShedCost Kind = "shed-cost"
	// ShedWait: the ranges of ShedWaitP50 and ServedWaitP50, each Of a
	// policy or a variant (By). Verdict Ranged.
	ShedWait Kind = "shed-wait"
	// OverloadFailed and OverloadException: Variants whose overload step
	// failed the degradation checks, or were the unbounded exception
	// with reasons, each with Reasons (Text). Verdict Failed, Exception.
	OverloadFailed    Kind = "overload-failed"
	OverloadException Kind = "overload-exception"
	// OverloadPassed: every variant passed the degradation checks.
	// Verdict Passed.
	OverloadPassed Kind = "overload-passed"
)

// The scaling preset's kinds; each figure's CPUs says at which count.
const (
	// ScalingVsDirect: per row, VsDirect Below where at some count its
	// SatRatio to direct's, paired by repeat, lies below 1 (then per such
	// count BelowAt and that SatRatio, and RatioAtLargest of the medians
	// with DirectAtLargest), else Tied. CPUCount figures list the counts.
	// Verdict Below where some row is, else Tied.
	ScalingVsDirect Kind = "scaling-vs-direct"
	// ScalingLowerBound: per row and count a loader-bound
	// LowerBoundRate. Verdict NotRanked.
	ScalingLowerBound Kind = "scaling-lower-bound"
	// ScalingEfficiency: per row Efficiency, its saturation at the most
	// CPUs as a share of linear scaling from the fewest (FromCPUs,
	// ToCPUs). Verdict Ranged.
	ScalingEfficiency Kind = "scaling-efficiency"
	// ScalingCPU: per count, direct's closed-loop CPUPerRequest (ns) and
	// each row's CPURatio to it. Verdict Ranged.
	ScalingCPU Kind = "scaling-cpu"
	// HandlerTarget: per -exec handler row its WorstCPURatio to direct
	// (CPUs: where), Met or Missed against Tolerance; CPUCount figures
	// list the counts. Verdict Met where every row is.
	HandlerTarget Kind = "handler-target"
)

// Verdict is what a finding, or one of its figures, concludes.
type Verdict string

// The verdicts.
const (
	NotRanked     Verdict = "not-ranked"
	Clear         Verdict = "clear"
	Tie           Verdict = "tie"
	Above         Verdict = "above"
	Below         Verdict = "below"
	Tied          Verdict = "tied"
	Within        Verdict = "within"
	Over          Verdict = "over"
	SatLowerBound Verdict = "saturation-lower-bound"
	// ClosedLowerBound: the closed loop was loader-bound.
	ClosedLowerBound Verdict = "closed-lower-bound"
	NotComparable    Verdict = "not-comparable"
	// NoDifference: the interval includes 1: no difference measurable
	// here (benchstat's "~").
	NoDifference Verdict = "no-difference"
	// NoPairs and Unbounded are a ratio figure's where no pair had both
	// figures (its Value NaN), or too few did to bound an interval
	// (ratio.MinPairs): no difference measurable either.
	NoPairs      Verdict = "no-pairs"
	Unbounded    Verdict = "unbounded"
	Bound        Verdict = "bound"
	LowerBound   Verdict = "lower-bound"
	Behind       Verdict = "behind"
	SomeWithin   Verdict = "some-within"
	NoneWithin   Verdict = "none-within"
	Ranged       Verdict = "ranged"
	Shed         Verdict = "shed"
	Kept         Verdict = "kept"
	Met          Verdict = "met"
	Missed       Verdict = "missed"
	Derived      Verdict = "derived"
	NotDerivable Verdict = "not-derivable"
	Failed       Verdict = "failed"
	Exception    Verdict = "exception"
	Passed       Verdict = "passed"
	IdleMost     Verdict = "idle-most"
	CostMost     Verdict = "cost-most"
)

// Measure names what a figure is.
type Measure string

// The measures; rates are req/s, durations nanoseconds, shares and
// differences per cent where the name says so, else plain ratios.
const (
	Saturation              Measure = "saturation"
	SatRatio                Measure = "saturation-ratio"
	Bracket                 Measure = "bracket"
	LoaderCPUs              Measure = "loader-cpus"
	ClosedRate              Measure = "closed-rate"
	ThroughputRatio         Measure = "throughput-ratio"
	Conns                   Measure = "connections"
	Difference              Measure = "difference-%"
	ErrorRate               Measure = "error-rate"
	AchievedShare           Measure = "achieved-%"
	ConcurrencyLimit        Measure = "concurrency-bound"
	Workers                 Measure = "workers"
	IODelay                 Measure = "io-delay"
	ShareOfBound            Measure = "share-of-bound-%"
	BelowDirect             Measure = "below-direct-%"
	Loss                    Measure = "loss-%"
	TopFunction             Measure = "top-function-%"
	TopFlat                 Measure = "top-flat"
	Factor                  Measure = "factor"
	SentShare               Measure = "sent-%"
	SLO                     Measure = "slo"
	ServedP99               Measure = "served-p99"
	ServedP99FromSend       Measure = "served-p99-from-send"
	Goodput                 Measure = "goodput"
	GoodputVsDirect         Measure = "goodput-vs-direct"
	GoodputVsSat            Measure = "goodput-vs-saturation"
	ShedPct                 Measure = "shed-%"
	DirectSaturation        Measure = "direct-saturation"
	DirectServedP99FromSend Measure = "direct-served-p99-from-send"
	Floor                   Measure = "floor"
	Best                    Measure = "best"
	BestP99                 Measure = "best-p99"
	Lowest                  Measure = "lowest"
	Highest                 Measure = "highest"
	ShedCostRatio           Measure = "shed-cost-ratio"
	ShedWaitP50             Measure = "shed-wait-p50"
	ServedWaitP50           Measure = "served-wait-p50"
	Reasons                 Measure = "reasons"
	VsDirect                Measure = "vs-direct"
	BelowAt                 Measure = "below-at"
	RatioAtLargest          Measure = "ratio-at-largest"
	DirectAtLargest         Measure = "direct-at-largest"
	CPUCount                Measure = "cpu-count"
	LowerBoundRate          Measure = "lower-bound"
	Efficiency              Measure = "efficiency"
	FromCPUs                Measure = "from-cpus"
	ToCPUs                  Measure = "to-cpus"
	CPUPerRequest           Measure = "cpu-per-request"
	ClosedCPUPerRequest     Measure = "closed-cpu-per-request"
	ServerBusy              Measure = "server-busy-%"
	ClosedServerBusy        Measure = "closed-server-busy-%"
	UtilisationRatio        Measure = "utilisation-ratio"
	CostRatio               Measure = "cost-ratio"
	OpenOverClosed          Measure = "open-over-closed"
	Unexplained             Measure = "unexplained"
	CPURatio                Measure = "cpu-ratio"
	WorstCPURatio           Measure = "worst-cpu-ratio"
	Tolerance               Measure = "tolerance"
)

// The groups of OverloadGoodput.
const (
	GroupShed = "shed 503s"
	GroupKept = "shed nothing"
)

// Finding is one thing a comparison's numbers support.
type Finding struct {
	Kind     Kind
	Workload string
	Verdict  Verdict
	Variants []string // those it names, in its order
	Figures  []Figure // the numbers it rests on
	// By says what the figures' Of names where it is not a variant
	// ("policy").
	By string `json:",omitempty"`
	// Note quotes, in words, a ruling made elsewhere (the verdict
	// package's reasoning, why a step was loader-bound).
	Note string `json:",omitempty"`
}

// Figure is one number of a finding.
type Figure struct {
	// Of is the variant (or group, policy) the figure is of; "" the
	// workload's.
	Of       string `json:",omitempty"`
	Name     Measure
	CPUs     int `json:",omitempty"` // the count it was measured at (the scaling preset)
	Value    float64
	Interval *Interval `json:",omitempty"` // the spread it came with (nil: one value)
	Text     string    `json:",omitempty"` // a figure that is a word (a function's name, reasons)
	Verdict  Verdict   `json:",omitempty"`
}

// add names v in f, with its figures.
func (f *Finding) add(v string, figs ...Figure) {
	f.Variants = append(f.Variants, v)
	f.Figures = append(f.Figures, figs...)
}

// verdictGroups are findings of one kind, one a verdict, in the order
// byVerdict is given them; each names the variants that reached it.
type verdictGroups []Finding

func byVerdict(kind Kind, wl string, order ...Verdict) verdictGroups {
	g := make(verdictGroups, len(order))
	for i, v := range order {
		g[i] = Finding{Kind: kind, Workload: wl, Verdict: v}
	}
	return g
}

// add names v, with its figures, in the finding of verdict.
func (g verdictGroups) add(verdict Verdict, v string, figs ...Figure) {
	g[slices.IndexFunc(g, func(f Finding) bool { return f.Verdict == verdict })].add(v, figs...)
}

// Figure is f's figure name of of (the first, at any CPU count).
func (f Finding) Figure(of string, name Measure) (Figure, bool) {
	for _, x := range f.Figures {
		if x.Of == of && x.Name == name {
			return x, true
		}
	}
	return Figure{}, false
}

// Value is f's figure name of of's value (0: none).
func (f Finding) Value(of string, name Measure) float64 {
	x, _ := f.Figure(of, name)
	return x.Value
}

// All are f's figures named name, in order.
func (f Finding) All(name Measure) []Figure {
	var out []Figure
	for _, x := range f.Figures {
		if x.Name == name {
			out = append(out, x)
		}
	}
	return out
}
