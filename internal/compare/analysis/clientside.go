package analysis

import (
	"math"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
)

// ClientFit is whether the loader can hold one client model's worst
// second of a storm: the spike's rate times the model's most attempts
// per first try, each at the dearer of the two measured costs (an
// attempt that times out also pays for a reconnect), as a share of the
// loader's CPUs. A model that does not fit can still give judged runs
// (a variant that answers in time never reaches its worst second); its
// runs are judged interval by interval, and the fit says what would let
// every run of it be judged.
type ClientFit struct {
	Model string
	// Attempts is the worst second's attempts per second; CPUs the
	// loader CPUs they take; Share those of the loader's.
	Attempts, CPUs, Share float64
	Fits                  bool
	// Sendable: the spike's first tries alone, answered at once, fit;
	// where they do not, no run of the model could be judged, and none
	// is made.
	Sendable bool
	// NeedCPUs is the fewest loader CPUs that hold it within
	// plan.MetaClientShare; FitSlots the most store slots with which the
	// spike (proportional to the store's slots) would fit the CPUs given
	// (0: not even one).
	NeedCPUs, FitSlots int
}

// ClientFits is cs's verdict for each of models, in their order, at the
// spike rate spike and a store stand-in of slots slots (nil: nothing
// measured).
func ClientFits(cs *result.ClientSide, models []string, spike float64, slots int) []ClientFit {
	if cs == nil || cs.LoaderCPUs < 1 {
		return nil
	}
	perAttempt := max(cs.Answered, cs.TimedOut).Seconds()
	room := plan.MetaClientShare * float64(cs.LoaderCPUs)
	var out []ClientFit
	for _, m := range models {
		most, ok := cs.MostAttempts[m]
		if !ok {
			continue
		}
		f := ClientFit{Model: m, Attempts: spike * most}
		f.CPUs = f.Attempts * perAttempt
		f.Share = f.CPUs / float64(cs.LoaderCPUs)
		f.Fits = f.CPUs <= room
		f.Sendable = spike*cs.Answered.Seconds() <= room
		f.NeedCPUs = max(1, int(math.Ceil(f.CPUs/plan.MetaClientShare)))
		if f.CPUs > 0 {
			f.FitSlots = int(float64(slots) * room / f.CPUs)
		}
		out = append(out, f)
	}
	return out
}
