// Package result is what a comparison measured, as data: the Comparison
// the runner fills and keeps in compare.json, which the analysis and the
// report read. Load reads a compare.json of any version as the current
// one (upgrade.go).
package result

import (
	"math"
	"slices"
	"time"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/cpuset"
)

// Comparison is everything one `loadtest compare` measured.
type Comparison struct {
	// Version is the file's schema (Version once loaded).
	Version int
	Preset  string
	// Options are those it ran with, Plan what they made of the preset.
	Options  plan.Options
	Plan     *plan.Plan
	Criteria Criteria
	Env      Environment
	// Dir is the folder the run wrote (its runs, profiles and report).
	Dir       string
	Workloads []*WorkloadResult
	Failures  []Failure
	// Notes are what the report must say about how the run went (loaded
	// machine, a pprof or graphviz that could not run).
	Notes []string
	// Interrupted: a signal (Ctrl-C, TERM) ended the comparison early.
	Interrupted bool
	// OverloadFailed lists the variants (workload and name) whose
	// overload step failed the degradation checks.
	OverloadFailed  []string
	Loader          []LoaderCheck
	ProfileWorkload string
	Profiles        []*ProfileSet
	// Published says where a published copy came from (nil: the run's
	// own folder).
	Published *Published `json:",omitempty"`
	// Metastable is the metastable preset's runs (nil: another preset).
	Metastable *Metastable `json:",omitempty"`
	// Writes is the writes preset's runs (nil: another preset).
	Writes *Writes `json:",omitempty"`
}

// Criteria are the rules a comparison's searches judged its steps by.
type Criteria struct {
	// MaxErrorRate is the share of failed requests a sustained rate may
	// have; a fixed-rate step above it is not comparable with an
	// error-free one.
	MaxErrorRate float64
	// LoaderBusy is the share of its CPUs at which the loader counts as
	// having run out (a step it failed is then loader-bound).
	LoaderBusy float64
}

// Published is a report copied for others (`make compare-publish`) from
// the run's folder From, where its raw profiles stayed.
type Published struct {
	From string
}

// WorkloadResult is one workload's numbers for every variant.
type WorkloadResult struct {
	Workload string
	Variants []*VariantResult
	// BaseRate is direct's median saturation (or -rate), which the later
	// steps take their shares of; BaseLowerBound: a search of it was
	// loader-bound, so it is only a lower bound.
	BaseRate       float64
	BaseLowerBound bool
	// Steps is the load of the workload's fixed-rate and overload steps,
	// the same for every variant, planned once direct's saturation was
	// known (nil where it was not: each variant then sized its own).
	Steps *plan.Steps `json:",omitempty"`
}

// VariantResult is one variant under one workload.
type VariantResult struct {
	Variant  plan.Variant
	Name     string
	Sat      []SatRun
	Closed   *ClosedRun
	Paired   *PairedRun `json:",omitempty"`
	Fixed    *FixedRun
	Overload *OverloadRun
	// Config is the labels of kvserver_config_info.
	Config map[string]string
}

// SatRun is one saturation search.
type SatRun struct {
	Repeat int
	// Rate is the validated saturation: the highest rate that held over
	// its search step and over a validating run (0: none held over its
	// validation).
	Rate      float64
	Validated bool
	// Bracket is where the search ended (nil: not recorded); without a
	// validation Lo held only in the short steps. Candidate is the rate
	// whose validation failed last where none held (else Rate).
	Bracket   *Bracket `json:",omitempty"`
	Candidate float64  `json:",omitempty"`
	HitMax    bool
	// LoaderBound: the loader, not the server, stopped the search, so Rate
	// is only a lower bound; LoaderCeiling is the loader-bound step's
	// rate, LoaderCPUs the loader's CPUs, Why the figures.
	LoaderBound   bool    `json:",omitempty"`
	LoaderCeiling float64 `json:",omitempty"`
	LoaderCPUs    int     `json:",omitempty"`
	Why           string  `json:",omitempty"`
	// ServerCPUPerRequest is kvserver's CPU per request over the
	// validating run (0: unknown).
	ServerCPUPerRequest time.Duration `json:",omitempty"`
	// Anchor is the median throughput of the closed loop that bounded the
	// search (0: none ran); AnchorExceeded: a step at it held, so it
	// bounded nothing.
	Anchor         float64 `json:",omitempty"`
	AnchorExceeded bool    `json:",omitempty"`
	Curve          []CurvePoint
	Dir            string
}

// Bracket is a saturation search's answer: Lo the highest measured rate
// that held, Hi the lowest that failed twice (0: not found).
type Bracket struct {
	Lo, Hi float64
}

// ValidatedServerShare is kvserver's CPU share over the validating run
// that held s's rate (0: none held, or not recorded).
func (s SatRun) ValidatedServerShare() float64 {
	if !s.Validated {
		return 0
	}
	for i := len(s.Curve) - 1; i >= 0; i-- {
		if p := s.Curve[i]; p.Validating() && p.Pass {
			return math.Max(p.Server.Share, 0)
		}
	}
	return 0
}

// CurvePoint is one step of a saturation search.
type CurvePoint struct {
	Phase           string // "ramp", "bisect" or "validate"
	Asked, Achieved float64
	P50             time.Duration `json:",omitempty"` // corrected (0: not recorded)
	P99             time.Duration // corrected
	// P99FromSend is the p99 from the actual send (0: not recorded), which
	// sizes later steps' connections.
	P99FromSend time.Duration `json:",omitempty"`
	Pass        bool
	Verdict     string
	// Loader and Server are each side's CPU use over the step;
	// LoaderBound marks a failure that was the loader's.
	Loader, Server cpuset.Use
	LoaderBound    bool `json:",omitempty"`
	Retry          bool `json:",omitempty"`
	// Seconds is the step's judged intervals, kept only where the step
	// decided its search's bracket (saturate's Bracket.Decided), so that a
	// reader sees whether a failure was one stall or the whole step while
	// compare.json stays small.
	Seconds []StepSecond `json:",omitempty"`
}

func (p CurvePoint) Validating() bool { return p.Phase == PhaseValidate }

// StepSecond is one judged interval of a search step (a second; shorter
// in a quick search): its start since the step's, the answers that ended
// in it per second, their corrected p99 (0: none), and whether it met the
// SLO and the error limit, as the step's verdict judged it.
type StepSecond struct {
	T    float64       `json:",omitempty"`
	Rate float64       `json:",omitempty"`
	P99  time.Duration `json:",omitempty"`
	OK   bool          `json:",omitempty"`
}

// ClosedRun is the closed-loop step: Conns connections each sending its
// next request as soon as the last is answered, in Rounds on one server:
// the cross-check of the open-loop saturation.
type ClosedRun struct {
	Conns  int
	Rounds []ClosedRound
	Dir    string
}

// ClosedRound is one round of a closed-loop step.
type ClosedRound struct {
	Rate                float64 // answers per second
	ServerCPUPerRequest time.Duration
	// Loader and Server are each side's CPU use; LoaderBound:
	// saturate.CPUBound.
	Loader, Server cpuset.Use
	LoaderBound    bool
	Why            string `json:",omitempty"`
	ErrorRate      float64
}

func (c *ClosedRun) Rates() []float64 {
	var r []float64
	for _, x := range c.Rounds {
		r = append(r, x.Rate)
	}
	return r
}

// LoaderBound tells whether a round was loader-bound.
func (c *ClosedRun) LoaderBound() bool {
	return slices.ContainsFunc(c.Rounds, func(r ClosedRound) bool { return r.LoaderBound })
}

// Served is the round's answers without error per second.
func (r ClosedRound) Served() float64 { return r.Rate * (1 - r.ErrorRate) }

// PairedRun is a variant's closed-loop rounds paired with direct's (the
// Against variant) on the same CPUs and connections, so that whatever
// drifts between pairs cancels inside each pair's ratio. Base[i] and
// Variant[i] are pair i.
type PairedRun struct {
	Against string
	Conns   int
	Base    []ClosedRound
	Variant []ClosedRound
	Dir     string
	// Alternating: pair i (from 1) ran direct's round first where i is
	// odd and the variant's first where it is even (PairOrder); false:
	// every pair ran direct's first.
	Alternating bool `json:",omitempty"`
}

// PairOrder is the order in which pair i (from 1) of an Alternating
// PairedRun ran its rounds, 0 direct's and 1 the variant's: alternating
// (ABBA) keeps what the position in a pair does to a round out of the
// pairs' median ratio.
func PairOrder(i int) [2]int {
	if i%2 == 0 {
		return [2]int{1, 0}
	}
	return [2]int{0, 1}
}

// Latencies are the percentiles the tables show.
type Latencies struct {
	P50, P90, P99, P999, Max time.Duration
}

// Distribution is a step's latencies at the chart's percentiles, from
// the intended send (corrected) and from the actual send.
type Distribution struct {
	Percentiles            []float64
	Corrected, Uncorrected []time.Duration
}

// FixedRun is the fixed-rate step at 70 % of direct's saturation (or of
// the variant's own, see plan.OwnRates).
type FixedRun struct {
	Asked, Achieved        float64
	Corrected, Uncorrected Latencies
	// Distribution is for the latency-by-percentile chart (nil: not
	// recorded; compare's Render reads it from the run's interval logs).
	Distribution        *Distribution `json:",omitempty"`
	ServerCPUPerRequest time.Duration
	ErrorRate           float64
	// ConnsStart are the connections the loader opened before the step
	// (0: not recorded), ConnsPeak the most it had.
	ConnsStart   int `json:",omitempty"`
	ConnsPeak    int
	InFlightPeak int
	// Behind says how the step fell behind its schedule ("" where it kept
	// to it, or was not checked).
	Behind string `json:",omitempty"`
	Dir    string
}

// RSSPoint is one sample of kvserver's resident memory.
type RSSPoint struct {
	Second float64 // since the baseline probe began
	Phase  string  // "baseline", "overload", "recovery"
	RSS    int64
}

// OverloadRun is the overload step with its probes before and after.
type OverloadRun struct {
	Asked    float64
	Planned  uint64
	Sent     int64
	Achieved float64
	// Goodput is served answers (2xx, 404) per second over the step.
	Goodput float64
	// ServedP99 is the corrected p99 of served answers only (shed 503s
	// are answered at once and would flatter it).
	ServedP99, ServedP99Uncorrected time.Duration
	// LoaderKeptUp: the loader sent the asked rate on schedule.
	LoaderKeptUp bool
	// ShedPct is 503s as a share of the requests sent.
	ShedPct float64
	// ShedWaitP50 and ServedWaitP50 are how long, from the send, shed and
	// served requests waited for their answer.
	ShedWaitP50, ServedWaitP50 time.Duration
	Served, Shed, Timeouts     int64
	Other                      int64
	ConnsPeak, InFlightPeak    int
	ConnsStart                 int `json:",omitempty"`
	// BaselineP99 and RecoveryP99 are the corrected p99 of the probes
	// before and after the overload.
	BaselineP99 time.Duration
	RecoveryP99 []time.Duration
	ProbeRate   float64
	PerSecond   []SecondPoint
	RSS         []RSSPoint
	// RSSGrowthMiBPerS and RSSSteadyMiB are the least-squares slope and
	// the median of the overload's second half.
	RSSGrowthMiBPerS, RSSSteadyMiB float64
	// ServerCPUPerRequest is ServerCPU ÷ Sent; ServerCPU kvserver's CPU
	// over the step. ProbeCPUPerRequest is its CPU per request over the
	// baseline probe, where nothing is shed (0: unknown).
	ServerCPUPerRequest time.Duration
	ServerCPU           time.Duration `json:",omitempty"`
	ProbeCPUPerRequest  time.Duration `json:",omitempty"`
	// FullLoadCPUPerRequest is kvserver's CPU per request over a
	// closed-loop round just before the step, at full load and shedding
	// nothing: what a served request costs, queueing and hand-offs
	// included (0: not measured, or it shed).
	FullLoadCPUPerRequest time.Duration `json:",omitempty"`
	Alive                 bool
	ExitCode              int
	Panicked              bool
	Verdict               string
	Dir                   string
}

// Failure is a step that could not complete: the report lists it.
type Failure struct {
	Workload, Variant, Step string
	Reason                  string
	LogTail                 string
}

// LoaderCheck says whether the loader kept up in one step: whether it
// sent the asked rate on schedule, and, in a step meant to be sustained,
// whether the step's backlog stayed level.
type LoaderCheck struct {
	Workload, Variant, Step string
	Asked, SendRate         float64
	LagP99                  time.Duration
	CPUPerRequest           time.Duration
	// CPUShare is the loader's CPU time over the step in cores.
	CPUShare float64
	// Loader and Server are each side's CPU use; both counts 0: neither
	// was recorded, and LoaderBound was not judged.
	Loader, Server cpuset.Use
	// KeptUp: the loader sent at least 99 % of the asked rate on
	// schedule, left nothing unsent, and the backlog of a step meant to be
	// sustained did not grow (Backlog says how it did). A validation is
	// judged as its search judged it, whatever the mean send rate.
	KeptUp  bool
	Backlog string `json:",omitempty"`
	// LoaderBound: the step fell short by the loader's doing
	// (saturate.Bound); Why gives the figures.
	LoaderBound bool   `json:",omitempty"`
	Why         string `json:",omitempty"`
	// Scheduled: Asked is the schedule's mean rate (a spike included)
	// and SendRate its first tries issued (a run under a client model,
	// whose retries are the clients' own).
	Scheduled bool `json:",omitempty"`
}

// BacklogGrew marks l as not kept up because its backlog grew as how
// says ("": it did not).
func (l *LoaderCheck) BacklogGrew(how string) {
	if how != "" {
		l.KeptUp, l.Backlog = false, how
	}
}

// SatRates are v's validated saturation rates over the repeats.
func (v *VariantResult) SatRates() []float64 {
	var r []float64
	for _, s := range v.Sat {
		if s.Rate > 0 {
			r = append(r, s.Rate)
		}
	}
	return r
}

// Brackets tells whether v's searches recorded their brackets (false:
// they did not, or none ran).
func (v *VariantResult) Brackets() bool {
	return len(v.Sat) > 0 && !slices.ContainsFunc(v.Sat, func(s SatRun) bool { return s.Bracket == nil })
}

// LoaderBound tells whether a search of v that held in validation was
// loader-bound, making its saturation only a lower bound.
func (v *VariantResult) LoaderBound() bool {
	return slices.ContainsFunc(v.Sat, func(s SatRun) bool { return s.LoaderBound && s.Rate > 0 })
}

// LoaderCPUs is how many CPUs the loader had in v's loader-bound
// searches (the fewest, 0 if none says).
func (v *VariantResult) LoaderCPUs() int {
	n := 0
	for _, s := range v.Sat {
		if s.LoaderBound && s.LoaderCPUs > 0 && (n == 0 || s.LoaderCPUs < n) {
			n = s.LoaderCPUs
		}
	}
	return n
}

// Baseline is the direct variant of w, if it ran (under the scaling
// preset, the first: on the fewest CPUs).
func (w *WorkloadResult) Baseline() *VariantResult {
	for _, v := range w.Variants {
		if v.Variant.IsBaseline() {
			return v
		}
	}
	return nil
}

// BaselineOf is the direct variant v is compared with: the one on as
// many CPUs (all the same but under the scaling preset).
func (w *WorkloadResult) BaselineOf(v *VariantResult) *VariantResult {
	for _, b := range w.Variants {
		if b.Variant.IsBaseline() && b.Variant.CPUs == v.Variant.CPUs {
			return b
		}
	}
	return nil
}
