package limit

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Defaults, chosen for this server rather than copied from Netflix, whose
// defaults assume RPCs of milliseconds and windows of a second. Here a
// served GET holds a slot for ~10–30 µs of CPU, the slow-backend variant
// for 1 ms, rates run from 1k to ~400k requests/s on 1–64 CPUs, and the
// limit must settle within a second or two of a change in load.
const (
	// DefaultMax bounds every adaptive limit: enough slots for the
	// slow-backend variant at ~1M requests/s (Little: 1 ms × 1M/s), and
	// Vegas's and Envoy's own default maximum.
	DefaultMax = 1000
	// DefaultInitialPerCPU × CPUs is the default initial limit: a few
	// requests per CPU keep every core busy while some wait on the store,
	// and from there Gradient2 and Vegas find the level within about a
	// second; AIMD climbs one a window (see the figures in gradient2.go,
	// vegas.go and aimd.go).
	DefaultInitialPerCPU = 4
	// DefaultWindow: 10 ms windows give 100 updates a second (Netflix: 1
	// s, one a second), while still holding >= 10 samples at the lowest
	// rate this server sees (1k/s). Closing one costs ~1 µs (window.go).
	DefaultWindow = 10 * time.Millisecond
	// DefaultWindowSamples is WindowedLimit's own minimum (10): the
	// median of fewer is noise.
	DefaultWindowSamples = 10
	// DefaultLongWindow is Gradient2's long-term average in windows: the
	// source's 600, which at its 1 s windows spans 10 minutes, here spans
	// ~6 s. The limit itself reacts within windows (a 10× rise in rtt
	// takes it from 1000 to 20 in ~0.5 s); the long average is the
	// baseline it compares with, and must outlast an overload, or the
	// overload's latency becomes the baseline and the limit climbs back
	// into it. A lasting change of the store's own latency is accepted in
	// ~5 s (the limit back at Max), where the source takes minutes.
	DefaultLongWindow = 600
	// DefaultTolerance is Gradient2's rttTolerance, as the source: the
	// window's rtt may reach 1.5× the long-term one before the limit
	// shrinks.
	DefaultTolerance = 1.5
	// DefaultGradient2Smoothing and DefaultVegasSmoothing are the
	// sources' (0.2 and 1: Vegas applies its step whole).
	DefaultGradient2Smoothing = 0.2
	DefaultVegasSmoothing     = 1.0
	// DefaultBackoff is AIMD's backoffRatio, as the source.
	DefaultBackoff = 0.9
	// DefaultTimeout is AIMD's timeout (the source: 5 s). 10 ms is 10×
	// the slowest normal slot hold here (the 1 ms slow backend) and a
	// tenth of the 100 ms p99 SLO the load lab holds the server to: a
	// window whose median hold passes it is overload, long before the
	// clients' SLO breaks.
	DefaultTimeout = 10 * time.Millisecond
)

// Config describes a limit. Zero values mean the defaults, documented per
// field; New validates the rest.
type Config struct {
	// Algorithm is one of Algorithms; "" means "fixed".
	Algorithm string
	// Initial is the limit at start, and the fixed limit for ever under
	// "fixed"; 0 means DefaultInitialPerCPU × CPUs, clamped to [Min, Max].
	// Must lie in [Min, Max].
	Initial int
	// Min is the lowest the limit goes, >= 1; 0 means CPUs (clamped to
	// an explicit Max or Initial below it): with fewer slots than CPUs a
	// CPU-bound store leaves cores idle, so an adaptive limit that went
	// lower would be throwing capacity away. -limit-min 1 allows it.
	Min int
	// Max is the highest the limit goes; 0 means DefaultMax (raised to an
	// explicit Min or Initial above it).
	Max int
	// CPUs scales the defaults of Min and Initial; 0 means GOMAXPROCS.
	CPUs int

	// Smoothing (gradient2, vegas) in (0, 1] is how much of each
	// window's new estimate the limit takes; 0 means
	// DefaultGradient2Smoothing for gradient2, DefaultVegasSmoothing for
	// vegas.
	Smoothing float64
	// Tolerance (gradient2) >= 1 is rttTolerance; 0 means
	// DefaultTolerance.
	Tolerance float64
	// LongWindow (gradient2) is the long-term rtt average's span, in
	// windows; 0 means DefaultLongWindow.
	LongWindow int
	// QueueSize (gradient2) is the additive term by which the limit grows
	// per update while latency holds: a fixed number, or 0 for
	// max(4, ⌊√limit⌋), GradientLimit's default (Gradient2's is a fixed 4).
	// The square root grows the limit in seconds, not minutes: at
	// smoothing 0.2, +0.2·√limit per window takes it from 20 to 1000 in
	// ~3 s of 10 ms windows, where +4·0.2 would take 12 s. Vegas's
	// thresholds are the source's (log10 of the limit), not set here.
	QueueSize int

	// Backoff (aimd) in [0.5, 1) multiplies the limit on a drop or
	// timeout; 0 means DefaultBackoff.
	Backoff float64
	// Timeout (aimd): a window whose rtt is above it backs off as a drop
	// does; 0 means DefaultTimeout.
	Timeout time.Duration

	// Window: samples are folded into windows of at least this long ...
	// (0 means DefaultWindow; a window also lasts at least twice its
	// fastest sample, at most a second, so that the limit an update set
	// has shown its effect before the next update; see window.go)
	Window time.Duration
	// WindowSamples: ... and at least this many samples, before the
	// algorithm sees one aggregate; 0 means DefaultWindowSamples.
	WindowSamples int

	// Now is the clock Sample's start times are read from, in
	// nanoseconds on a monotonic scale; nil means Monotonic. New reads it
	// once, to open the first window; later windows are timed by the
	// samples' own start+rtt, so Sample reads no clock.
	Now func() int64
}

// WithDefaults returns c with every zero field set to its default. It
// never turns a valid setting into an invalid one: defaults bend to the
// explicit bounds (a default Min above an explicit Max is lowered to it).
func (c Config) WithDefaults() Config {
	if c.Algorithm == "" {
		c.Algorithm = "fixed"
	}
	if c.CPUs <= 0 {
		c.CPUs = runtime.GOMAXPROCS(0)
	}
	if c.Min == 0 {
		c.Min = c.CPUs
		if c.Max > 0 && c.Min > c.Max {
			c.Min = c.Max
		}
		if c.Initial > 0 && c.Min > c.Initial {
			c.Min = c.Initial
		}
	}
	if c.Max == 0 {
		c.Max = max(DefaultMax, c.Min, c.Initial)
	}
	if c.Initial == 0 {
		c.Initial = min(max(DefaultInitialPerCPU*c.CPUs, c.Min), c.Max)
	}
	if c.Smoothing == 0 {
		c.Smoothing = DefaultGradient2Smoothing
		if c.Algorithm == "vegas" {
			c.Smoothing = DefaultVegasSmoothing
		}
	}
	if c.Tolerance == 0 {
		c.Tolerance = DefaultTolerance
	}
	if c.LongWindow == 0 {
		c.LongWindow = DefaultLongWindow
	}
	if c.Backoff == 0 {
		c.Backoff = DefaultBackoff
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.WindowSamples == 0 {
		c.WindowSamples = DefaultWindowSamples
	}
	if c.Now == nil {
		c.Now = Monotonic
	}
	return c
}

// Validate checks a Config that went through WithDefaults, as New does,
// without building a limit. Its errors name the kvserver flag (-limit…)
// of a setting that has one, else the Config field, with the value and
// the accepted range. Every setting is checked whatever the algorithm: a
// flag given a value out of range is a mistake even where the chosen
// algorithm ignores it.
func (c Config) Validate() error {
	if !slices.Contains(Algorithms, c.Algorithm) {
		return fmt.Errorf("-limit %q: want one of %s", c.Algorithm, strings.Join(Algorithms, ", "))
	}
	for _, s := range []struct {
		name string
		v    int
	}{{"-limit-min", c.Min}, {"-limit-max", c.Max}, {"-limit-initial", c.Initial}} {
		if s.v < 1 {
			return fmt.Errorf("%s %d is below 1", s.name, s.v)
		}
	}
	if c.Min > c.Max {
		return fmt.Errorf("-limit-min %d is above -limit-max %d", c.Min, c.Max)
	}
	if c.Initial < c.Min || c.Initial > c.Max {
		return fmt.Errorf("-limit-initial %d is outside [-limit-min %d, -limit-max %d]", c.Initial, c.Min, c.Max)
	}
	// The comparisons are written so that NaN fails them.
	if !(c.Smoothing > 0 && c.Smoothing <= 1) {
		return fmt.Errorf("-limit-smoothing %v is outside (0, 1]", c.Smoothing)
	}
	if !(c.Backoff >= 0.5 && c.Backoff < 1) {
		return fmt.Errorf("-limit-backoff %v is outside [0.5, 1)", c.Backoff)
	}
	if !(c.Tolerance >= 1) {
		return fmt.Errorf("limit.Config.Tolerance %v is below 1", c.Tolerance)
	}
	if c.LongWindow < 1 {
		return fmt.Errorf("limit.Config.LongWindow %d is below 1", c.LongWindow)
	}
	if c.WindowSamples < 1 {
		return fmt.Errorf("limit.Config.WindowSamples %d is below 1", c.WindowSamples)
	}
	if c.Timeout <= 0 {
		return fmt.Errorf("limit.Config.Timeout %v is not positive", c.Timeout)
	}
	if c.Window <= 0 {
		return fmt.Errorf("limit.Config.Window %v is not positive", c.Window)
	}
	if c.QueueSize < 0 {
		return fmt.Errorf("limit.Config.QueueSize %d is below 0", c.QueueSize)
	}
	return nil
}
