package analysis

import (
	"fmt"
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

// StormSlots is the store stand-in's slots a client model's storm runs
// in front of where the preset sizes storms to the loader
// (plan.Metastable.SizeStorms), given f, its fit in front of a store of
// slots: slots where its worst second fits the loader's room, else the
// largest power of two no larger than f.FitSlots (so that populations
// share stores, and direct's searches of them), and 1 where not even one
// slot would fit: a storm that small is the least this stand-in asks,
// and its runs are judged interval by interval, as every run is.
func StormSlots(f ClientFit, slots int) int {
	if f.Fits || slots <= 1 {
		return slots
	}
	n := 1
	for n*2 <= min(f.FitSlots, slots) {
		n *= 2
	}
	return n
}

// StormStores is the store (its slots) each of models runs its storm in
// front of where the preset sizes storms: each model whose worst second
// fits in front of slots at spike stays there; each other goes to
// StormSlots' store, where search gives the spike direct's saturation
// there sets (ok false: none validated, and the models sized to it are
// left out of the answer); a model that does not fit that spike goes
// down again, to 1 slot at the least. search is called once per store
// but slots, the largest first. Models cs has no figure for stay in
// front of slots.
func StormStores(cs *result.ClientSide, models []string, spike float64, slots int, search func(slots int) (spike float64, ok bool)) map[string]int {
	out := map[string]int{}
	for _, m := range models {
		out[m] = slots
	}
	for _, f := range ClientFits(cs, models, spike, slots) {
		out[f.Model] = StormSlots(f, slots)
	}
	searched := map[int]bool{slots: true}
	for {
		next := 0
		for _, n := range out {
			if !searched[n] && n > next {
				next = n
			}
		}
		if next == 0 {
			return out
		}
		searched[next] = true
		spikeThere, ok := search(next)
		var at []string
		for _, m := range models {
			if n, in := out[m]; in && n == next {
				at = append(at, m)
			}
		}
		if !ok {
			for _, m := range at {
				delete(out, m)
			}
			continue
		}
		for _, f := range ClientFits(cs, at, spikeThere, next) {
			out[f.Model] = StormSlots(f, next)
		}
	}
}

// Text says whether the loader holds f's worst second, and if not, what
// would let it.
func (f ClientFit) Text() string {
	switch {
	case f.Fits:
		return "yes"
	case !f.Sendable:
		return "no, nor the spike's first tries: not run; " + f.advice()
	}
	return "no: " + f.advice()
}

func (f ClientFit) advice() string {
	advice := "give the loader " + result.Count(max(f.NeedCPUs, 1), "CPU") + " (-loader-cpus)"
	if f.FitSlots >= 1 {
		advice += fmt.Sprintf(", or a slower store stand-in (-store-slots %d)", f.FitSlots)
	}
	return advice + ", or clients on more hosts than one"
}
