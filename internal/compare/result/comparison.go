// Package result is what a comparison measured, as data: the
// Comparison that the runner fills step by step and keeps in
// compare.json, and that the analysis and the report are computed from.
// Nothing here measures, judges or formats; Load reads a compare.json of
// any version as the current one (upgrade.go).
package result

import (
	"math"
	"slices"
	"time"

	"github.com/kvpool/kvpool/internal/compare/plan"
)

// Comparison is everything one `loadtest compare` measured: what the
// report, the charts and compare.json are written from.
type Comparison struct {
	// Version is the file's schema (Version once loaded).
	Version int
	Preset  string
	// Options are those it ran with, Plan what they made of the preset
	// (compare.json keeps both, so that the report can be written again).
	Options plan.Options
	Plan    *plan.Plan
	// Criteria are the rules its steps were judged by.
	Criteria Criteria
	Env      Environment
	// Dir is the folder the run wrote (its runs, profiles and report).
	Dir       string
	Workloads []*WorkloadResult
	Failures  []Failure
	// Notes are what the report must say about how the run went (loaded
	// machine, a pprof or graphviz that could not run).
	Notes []string
	// Interrupted is set when a signal (Ctrl-C, TERM) ended the comparison early.
	Interrupted bool
	// OverloadFailed lists the variants (workload and name) whose
	// overload step failed the degradation checks.
	OverloadFailed []string
	// Loader is one line per step on whether the loader kept up.
	Loader []LoaderCheck
	// ProfileWorkload is the workload the profiles were taken under.
	ProfileWorkload string
	Profiles        []*ProfileSet
	// Published says where a published copy came from (nil: the run's
	// own folder).
	Published *Published `json:",omitempty"`
	// Metastable is the metastable preset's runs (nil: another preset).
	Metastable *Metastable `json:",omitempty"`
}

// Criteria are the rules a comparison's steps were judged by, as its
// saturation searches applied them.
type Criteria struct {
	// MaxErrorRate is the share of failed requests a sustained rate may
	// have; a fixed-rate step above it is not comparable with an
	// error-free one.
	MaxErrorRate float64
	// LoaderBusy is the share of its CPUs at which the loader counts as
	// having run out (a step it failed is then loader-bound).
	LoaderBusy float64
}

// Published is a report copied for others to read (`make
// compare-publish`): From is the run's folder it came from, where its
// raw profiles stayed.
type Published struct {
	From string
}

// WorkloadResult is one workload's numbers for every variant.
type WorkloadResult struct {
	Workload string
	Variants []*VariantResult
	// BaseRate is direct's median saturation (or -rate): the fixed step
	// runs at 70 % of it, the overload step at the preset's factor.
	BaseRate float64
	// BaseLowerBound: BaseRate is only a lower bound of direct's
	// saturation, a search of it having been loader-bound; a step at a
	// multiple of it asked at most that multiple.
	BaseLowerBound bool
}

// VariantResult is one variant under one workload.
type VariantResult struct {
	Variant plan.Variant
	Name    string
	Sat     []SatRun
	// Closed is the closed-loop step (direct's cross-check; every
	// variant's in the scaling preset).
	Closed *ClosedRun
	// Paired is the closed-loop rounds against direct, interleaved (nil:
	// direct itself, or none ran).
	Paired   *PairedRun `json:",omitempty"`
	Fixed    *FixedRun
	Overload *OverloadRun
	// Config is kvserver_config_info's labels as the variant's server
	// reported them.
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
	// Bracket is where the search ended: Lo the highest rate that held,
	// Hi the lowest that failed twice (0: none), both measured rates;
	// without a validation Lo held only in the short steps. Candidate is
	// the rate whose validation failed last where none held (else Rate).
	// A nil Bracket was not recorded.
	Bracket   *Bracket `json:",omitempty"`
	Candidate float64  `json:",omitempty"`
	HitMax    bool
	// LoaderBound: the loader, not the server, stopped the search, so Rate
	// is only a lower bound of the server's saturation (saturate's
	// Saturation.LoaderBound); LoaderCeiling is the loader-bound step's
	// rate, LoaderCPUs how many CPUs the loader had, Why the figures.
	LoaderBound   bool    `json:",omitempty"`
	LoaderCeiling float64 `json:",omitempty"`
	LoaderCPUs    int     `json:",omitempty"`
	Why           string  `json:",omitempty"`
	// ServerCPUPerRequest is kvserver's CPU per request over the
	// validating run (0: unknown).
	ServerCPUPerRequest time.Duration `json:",omitempty"`
	// Anchor is the throughput of the closed loop run on the search's
	// server just before it (the median of its rounds), which bounded the
	// search; AnchorExceeded: a step at it held, so it bounded nothing. 0
	// where none ran (plan.Timing.AnchorRounds).
	Anchor         float64 `json:",omitempty"`
	AnchorExceeded bool    `json:",omitempty"`
	Curve          []CurvePoint
	Dir            string
}

// Bracket is a saturation search's answer: Lo held, Hi failed twice
// (0: not found).
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
			return math.Max(p.ServerShare, 0)
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
	// P99FromSend is the p99 from the actual send (0: not recorded): the
	// server's answer time, which sizes the connections of later steps
	// (plan.LittleConns).
	P99FromSend time.Duration `json:",omitempty"`
	Pass        bool
	Verdict     string
	// LoaderShare and ServerShare are each side's CPU over the step as a
	// share of its own CPUs (negative: unknown); LoaderBound marks a
	// failure that was the loader's.
	LoaderShare float64 `json:",omitempty"`
	ServerShare float64 `json:",omitempty"`
	LoaderBound bool    `json:",omitempty"`
	Retry       bool    `json:",omitempty"`
	// Seconds is the step's judged intervals, kept only where the step
	// decided its search's bracket (saturate's Bracket.Decided: at Lo a
	// run that held, the validating run included; at Hi a run that
	// failed), so that a reader sees whether a failure was one stall or
	// the whole step while compare.json stays small. Nil for every other
	// step, and where they were not recorded.
	Seconds []StepSecond `json:",omitempty"`
}

// Validating tells whether p is a validating run.
func (p CurvePoint) Validating() bool { return p.Phase == PhaseValidate }

// StepSecond is one judged interval of a search step (a second; shorter
// in a quick search), as its step's verdict judged it.
type StepSecond struct {
	// T is its start in seconds since the step's start.
	T float64 `json:",omitempty"`
	// Rate is the answers that ended in it, per second.
	Rate float64 `json:",omitempty"`
	// P99 is their corrected p99 (0 where nothing was answered); the
	// last interval's takes in the responses after the schedule, as the
	// verdict did.
	P99 time.Duration `json:",omitempty"`
	// OK: it met the SLO and the error limit.
	OK bool `json:",omitempty"`
}

// ClosedRun is the closed-loop step: Conns connections each sending its
// next request as soon as the last is answered, in Rounds of equal
// length on one server. Its throughput is what the server serves with the
// loader never waiting on a schedule: the cross-check of the open-loop
// saturation.
type ClosedRun struct {
	Conns  int
	Rounds []ClosedRound
	Dir    string
}

// ClosedRound is one round of a closed-loop step.
type ClosedRound struct {
	Rate float64 // answers per second
	// ServerCPUPerRequest is kvserver's CPU over the round ÷ requests.
	ServerCPUPerRequest time.Duration
	// LoaderShare and ServerShare are each side's CPU as a share of its
	// CPUs (negative: unknown); LoaderBound: the loader used 90 % or more
	// of its CPUs (saturate.Bound), so Rate is what it could send.
	LoaderShare, ServerShare float64
	LoaderCPUs, ServerCPUs   int
	LoaderBound              bool
	Why                      string `json:",omitempty"`
	ErrorRate                float64
}

// Rates are c's rates by round.
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

// PairedRun is a variant's closed-loop rounds paired with direct's on
// as many CPUs: both kvservers up on fresh copies of one store and on
// the same CPUs, the rounds alternating between them over the same
// connections (direct, the variant, direct, the variant, …), so that
// whatever drifts on the machine between pairs cancels inside each
// pair's ratio. Base[i] and Variant[i] are pair i.
type PairedRun struct {
	// Against is the direct variant's name.
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
// PairedRun ran its rounds: 0 is direct's, 1 the variant's. Alternating
// the order (ABBA) keeps whatever the position in a pair does to a
// round, such as what the round just before left running on the
// server's CPU, out of the pairs' median ratio: half the pairs take it
// one way, half the other.
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
	Distribution *Distribution `json:",omitempty"`
	// ServerCPUPerRequest is kvserver's CPU time over the step divided by
	// the requests sent.
	ServerCPUPerRequest time.Duration
	ErrorRate           float64
	// ConnsStart are the connections the loader opened before the step
	// (plan.LittleConns), ConnsPeak the most it had: above ConnsStart, every
	// connection was busy at times and it opened more (ConnsStart 0: not
	// recorded).
	ConnsStart   int `json:",omitempty"`
	ConnsPeak    int
	InFlightPeak int
	// Behind says how the step fell behind its schedule: requests sent
	// late or never, or a backlog that grew over the step; "" where it
	// kept to it, or where it was not checked (the analysis still has
	// Achieved against Asked).
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
	// are answered at once and would flatter it); ServedP99Uncorrected
	// from the actual send, which leaves out the loader's own backlog.
	ServedP99, ServedP99Uncorrected time.Duration
	// LoaderKeptUp: the loader sent the asked rate on schedule. When it
	// did not, corrected latencies include its own backlog.
	LoaderKeptUp bool
	// ShedPct is 503s as a share of the requests sent.
	ShedPct float64
	// ShedWaitP50 and ServedWaitP50: how long shed and served requests
	// waited for their answer, from the actual send: which were shed.
	ShedWaitP50, ServedWaitP50 time.Duration
	Served, Shed, Timeouts     int64
	Other                      int64
	ConnsPeak, InFlightPeak    int
	ConnsStart                 int `json:",omitempty"`
	// BaselineP99 is the corrected p99 of the probe before the overload;
	// RecoveryP99 of each one-second probe after it.
	BaselineP99 time.Duration
	RecoveryP99 []time.Duration
	ProbeRate   float64
	PerSecond   []SecondPoint
	RSS         []RSSPoint
	// RSSGrowthMiBPerS and RSSSteadyMiB describe the overload's second
	// half: least-squares slope and median.
	RSSGrowthMiBPerS, RSSSteadyMiB float64
	// ServerCPUPerRequest over the overload step: ServerCPU ÷ Sent.
	ServerCPUPerRequest time.Duration
	// ServerCPU is kvserver's CPU time over the overload step;
	// ProbeCPUPerRequest its CPU per request over the baseline probe,
	// where nothing is shed: what a served request costs (0: unknown).
	ServerCPU          time.Duration `json:",omitempty"`
	ProbeCPUPerRequest time.Duration `json:",omitempty"`
	// FullLoadCPUPerRequest is kvserver's CPU per request over a
	// closed-loop round on the same server just before the overload step,
	// where the variant served at full load and shed nothing: what a
	// served request costs there, queueing and hand-offs included, which
	// CPUPerShed prefers to the half-load probe's (0: not measured, or it
	// shed).
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
	// LoaderShare is the loader's CPU as a share of its LoaderCPUs,
	// ServerShare kvserver's as a share of its ServerCPUs (its set, or
	// every online CPU where it shared them); negative: unknown. Both
	// CPU counts 0: neither was recorded, and LoaderBound was not judged.
	LoaderShare float64 `json:",omitempty"`
	LoaderCPUs  int     `json:",omitempty"`
	ServerShare float64 `json:",omitempty"`
	ServerCPUs  int     `json:",omitempty"`
	// KeptUp: the loader sent at least 99 % of the asked rate on
	// schedule and left nothing unsent, and, in a fixed-rate step, the
	// backlog did not grow (Backlog). A validation is judged as its
	// search judged it: nothing unsent and the backlog level, whatever
	// the mean send rate.
	KeptUp bool
	// Backlog, where not empty, says how the backlog grew in a fixed-rate
	// step or a validation (the searches' rule: requests in flight or the
	// send lag's p99, the later half of the step against the earlier),
	// so that the step did not keep up however much the loader sent.
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

// BacklogGrew marks l as not kept up because its backlog grew, as how
// says; an empty how changes nothing.
func (l *LoaderCheck) BacklogGrew(how string) {
	if how != "" {
		l.KeptUp, l.Backlog = false, how
	}
}

// SatRates are v's validated saturation rates over the repeats: a
// search whose validation did not hold has none, and nothing is computed
// from its figure.
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
// loader-bound: its saturation, the median of those searches, is then
// only a lower bound. A loader-bound search that held nothing sets no
// figure, so bounds none.
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
