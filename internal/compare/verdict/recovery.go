package verdict

import (
	"fmt"
	"math"
	"slices"
)

// Recovery is what the recovery rule looks at: the corrected p99 of a
// baseline run below saturation before the overload, and of each
// one-second probe at the same rate after it.
type Recovery struct {
	// BaselineMs is the baseline run's corrected p99 in ms; NaN or
	// negative when it is unknown (the run failed), read as 0 like
	// overload.sh did.
	BaselineMs float64
	// AfterMs[i] is the corrected p99 of second i+1 after the overload;
	// NaN for a second whose p99 is unknown (no answers, failed probe).
	AfterMs []float64
}

// NormalP99 is the highest p99 still called normal after an overload:
// max(2 × baseline, baseline + 5 ms). The additive floor keeps a fast
// baseline (a fraction of a millisecond) from making any scheduling hiccup
// look like a failure to recover.
func NormalP99(baselineMs float64) float64 {
	if math.IsNaN(baselineMs) || baselineMs < 0 {
		baselineMs = 0
	}
	return math.Max(2*baselineMs, baselineMs+5)
}

// Normal tells whether a second after the overload whose corrected p99
// was p99Ms is normal against the baseline's: known, and at most
// NormalP99(baselineMs). The recovery rule and whoever stops probing at
// the first normal second both ask it.
func Normal(baselineMs, p99Ms float64) bool {
	return !math.IsNaN(p99Ms) && p99Ms <= NormalP99(baselineMs)
}

// notRecovered applies the recovery rule: the recovery time is the
// first second after the overload whose p99 is known and at most
// NormalP99(baseline). It is "" where some second in AfterMs is, else
// says that the step did not recover within len(AfterMs) seconds.
func (r Recovery) notRecovered() string {
	if slices.ContainsFunc(r.AfterMs, func(p float64) bool { return Normal(r.BaselineMs, p) }) {
		return ""
	}
	return fmt.Sprintf("p99 not normal (≤ %.3g ms) within %ds", NormalP99(r.BaselineMs), len(r.AfterMs))
}
