package compare

import (
	"slices"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Comparison is everything one `loadtest compare` measured: what the
// report, the charts and compare.json are written from.
type Comparison struct {
	Preset string
	// Options are those it ran with (compare.json keeps them, so that
	// Render can write the report again).
	Options Options
	plan    *plan
	Env     Environment
	// Dir is the report's folder.
	Dir       string
	Workloads []*WorkloadResult
	Failures  []Failure
	// Notes are what the report must say about how the run went (loaded
	// machine, a pprof or graphviz that could not run).
	Notes []string
	// Interrupted is set when Ctrl-C ended the comparison early.
	Interrupted bool
	// OverloadFailed lists the variants (workload and name) whose
	// overload step failed the degradation checks.
	OverloadFailed []string
	// Loader is one line per step on whether the loader kept up.
	Loader []LoaderCheck
	// Charts are the charts written, relative to Dir.
	Charts []ChartFile
	// ProfileWorkload is the workload the profiles were taken under.
	ProfileWorkload string
	Profiles        []*ProfileSet
	// Findings are the report's findings, as written.
	Findings []string
}

// WorkloadResult is one workload's numbers for every variant.
type WorkloadResult struct {
	Workload string
	Variants []*VariantResult
	// BaseRate is direct's median saturation (or -rate): the fixed step
	// runs at 70 % of it, the overload step at the preset's factor.
	BaseRate float64
}

// VariantResult is one variant under one workload.
type VariantResult struct {
	Variant  Variant
	Name     string
	Sat      []SatRun
	Fixed    *FixedRun
	Overload *OverloadRun
	// Config is kvserver_config_info's labels as the variant's server
	// reported them.
	Config map[string]string
}

// SatRun is one saturation search.
type SatRun struct {
	Repeat    int
	Rate      float64
	Validated bool
	HitMax    bool
	Curve     []CurvePoint
	Dir       string
}

// CurvePoint is one step of a saturation search.
type CurvePoint struct {
	Phase           string // "ramp", "bisect" or "validate"
	Asked, Achieved float64
	P99             time.Duration // corrected
	Pass            bool
	Verdict         string
}

// Latencies are the percentiles the tables show.
type Latencies struct {
	P50, P90, P99, P999, Max time.Duration
}

func latenciesOf(h *hdrhistogram.Histogram) Latencies {
	at := func(p float64) time.Duration { return time.Duration(h.ValueAtPercentile(p)) * time.Microsecond }
	return Latencies{P50: at(50), P90: at(90), P99: at(99), P999: at(99.9), Max: time.Duration(h.Max()) * time.Microsecond}
}

// FixedRun is the fixed-rate step at 70 % of direct's saturation (or of
// the variant's own, see plan.OwnRates).
type FixedRun struct {
	Asked, Achieved        float64
	Corrected, Uncorrected Latencies
	// The distributions, for the latency-by-percentile chart.
	CorrectedHist, UncorrectedHist *hdrhistogram.Histogram `json:"-"`
	// ServerCPUPerRequest is kvserver's CPU time over the step divided by
	// the requests sent.
	ServerCPUPerRequest time.Duration
	ErrorRate           float64
	ConnsPeak           int
	InFlightPeak        int
	Dir                 string
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
	// ServerCPUPerRequest over the overload step.
	ServerCPUPerRequest time.Duration
	Alive               bool
	ExitCode            int
	Panicked            bool
	Verdict             string
	Dir                 string
}

// Failure is a step that could not complete: the report lists it.
type Failure struct {
	Workload, Variant, Step string
	Reason                  string
	LogTail                 string
}

// LoaderCheck says whether the loader kept up in one step.
type LoaderCheck struct {
	Workload, Variant, Step string
	Asked, SendRate         float64
	LagP99                  time.Duration
	CPUPerRequest           time.Duration
	// CPUShare is the loader's CPU time over the step in cores.
	CPUShare float64
	KeptUp   bool
}

// ChartFile is a chart written next to the report.
type ChartFile struct {
	Title, Path, Caption string
}

// SatRates is v's saturation rates over the repeats (0 where none passed).
func (v *VariantResult) SatRates() []float64 {
	var r []float64
	for _, s := range v.Sat {
		r = append(r, s.Rate)
	}
	return r
}

// median of xs (0 for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// spread is max - min of xs.
func spread(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return slices.Max(xs) - slices.Min(xs)
}

// baseline is the direct variant of w, if it ran.
func (w *WorkloadResult) baseline() *VariantResult {
	for _, v := range w.Variants {
		if v.Variant.IsBaseline() {
			return v
		}
	}
	return nil
}
