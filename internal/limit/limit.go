// Package limit decides how many requests may hold a slot at once: a
// concurrency limit, fixed or adapting to the latency the slots' holders
// see, after Netflix concurrency-limits (Gradient2, Vegas, AIMD, with
// WindowedLimit in front) and Envoy's adaptive concurrency filter.
//
// The caller (an admission pool) reads Current on every admission attempt
// and reports every finished request to Sample; both are on the request
// path, so both are lock-free and allocate nothing. Samples are folded into
// windows (window.go); only a whole window reaches the algorithm, so one
// slow request does not move the limit. The package knows nothing of HTTP
// or pools: a sample is a start time, a duration, an in-flight count and
// whether the outcome meant overload.
package limit

import (
	"time"
)

// Limit is how many requests may hold a slot at once, adapting to samples.
type Limit interface {
	// Current is the limit now, within [Config.Min, Config.Max] (so >= 1).
	// It is an atomic load: cheap, and safe for concurrent use.
	Current() int
	// Sample reports one request that held a slot: admitted at start
	// (nanoseconds on the Config.Now scale), held it for rtt, with inflight
	// requests holding slots when it was admitted (itself included);
	// dropped reports an outcome that means overload (AIMD and Vegas back
	// off on it). Safe for concurrent use; it allocates nothing and never
	// waits for a lock: at most one caller at a time, the one whose sample
	// ends a window, also runs the algorithm.
	Sample(start int64, rtt time.Duration, inflight int, dropped bool)
	// Changes counts the window updates that changed Current: a metric
	// for how often the limit moves.
	Changes() uint64
	// Name is the algorithm, one of Algorithms.
	Name() string
}

// Latencies is a Limit that tells how long its samples held their slots:
// every limit New returns but "fixed", and Measured. A pool bounds the
// time a request may wait by it (the queue's drain time is about queued
// × median ÷ limit).
type Latencies interface {
	// RTT is the median rtt of the last closed window, and the lowest
	// window median of the last 5-10 s (the store's no-load service
	// time, as far as the samples show it); both 0 until a window has
	// closed. Two atomic loads.
	RTT() (median, lowest time.Duration)
}

// Measured is a limit of n slots for ever, like "fixed", that also folds
// its samples into windows so that it can tell their latencies
// (Latencies): for a pool that bounds waits in time behind a fixed
// number of slots. cfg gives the windows (Window, WindowSamples, Now);
// its algorithm and bounds are not used.
func Measured(n int, cfg Config) Limit {
	cfg = cfg.WithDefaults()
	cfg.Algorithm, cfg.Initial = "fixed", n
	return newWindowed(cfg, constant(n))
}

// constant is the rule of Measured: the limit never moves.
type constant int

func (c constant) update(aggregate) int { return int(c) }

// Algorithms are the names New accepts in Config.Algorithm.
var Algorithms = []string{"fixed", "gradient2", "vegas", "aimd"}

// New returns the limit cfg describes, with zero fields set to their
// defaults (Config.WithDefaults), or an error naming the kvserver flag of
// the first setting outside its range.
func New(cfg Config) (Limit, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var r rule
	switch cfg.Algorithm {
	case "fixed":
		return fixed(cfg.Initial), nil
	case "gradient2":
		r = newGradient2(cfg)
	case "vegas":
		r = newVegas(cfg)
	case "aimd":
		r = newAIMD(cfg)
	}
	return newWindowed(cfg, r), nil
}

// fixed is a limit that never moves: Config.Initial for ever (kvserver's
// -workers).
type fixed int

func (f fixed) Current() int                         { return int(f) }
func (fixed) Sample(int64, time.Duration, int, bool) {}
func (fixed) Changes() uint64                        { return 0 }
func (fixed) Name() string                           { return "fixed" }

// epoch anchors Monotonic: time.Since reads the monotonic clock, so sample
// times are immune to wall-clock jumps.
var epoch = time.Now()

// Monotonic is the clock a Config without Now uses: nanoseconds since the
// process started, on the monotonic clock. A caller without a clock of its
// own takes Sample's start from it.
func Monotonic() int64 { return int64(time.Since(epoch)) }
