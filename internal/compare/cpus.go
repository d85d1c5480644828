package compare

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/loadgen/client"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
)

// Placement is where a comparison runs kvserver and the loader: Server
// and Loader are disjoint CPU sets, or both empty, and then the two share
// Affinity, this process's CPUs. kvserver starts bound to Server, so its
// GOMAXPROCS (and default -workers) is Server's size; the loader pins one
// event loop to each CPU of Loader.
type Placement struct {
	Server, Loader cpuset.Set
	Affinity       cpuset.Set
	// How says how the sets were chosen, for the report.
	How string
}

func (p Placement) Shared() bool { return p.Server.IsEmpty() }

// defaultSplitAt is the size of the affinity set from which a comparison
// splits it in Halves by default (below, halves of one CPU are what -pin
// asks for explicitly); the scaling preset, which needs kvserver on CPUs
// of its own to count them, splits from scalingSplitAt.
const (
	defaultSplitAt = 4
	scalingSplitAt = 2
)

// The flags of the CPU sets, as errors name them.
const (
	flagServerCPUs = "-server-cpus"
	flagLoaderCPUs = "-loader-cpus"
)

// resolvePlacement decides o's placement on a process whose affinity is
// the given set; check refuses sets the machine lacks (cpuset.Set.Check).
//
//   - -pin: kvserver on CPU 0, the loader on CPU 1 (with either list: refused).
//   - both lists: as given; they must not overlap.
//   - one list: the other side gets the rest of the affinity set
//     (refused where nothing is left).
//   - neither: on Linux, the affinity set's Halves when it has
//     defaultSplitAt CPUs or more (scalingSplitAt for the scaling
//     preset), else shared.
//
// Every error names the flag and the accepted form.
func resolvePlacement(o *plan.Options, affinity cpuset.Set, check func(cpuset.Set) error) (Placement, error) {
	p := Placement{Affinity: affinity}
	serverText, loaderText := strings.TrimSpace(o.ServerCPUs), strings.TrimSpace(o.LoaderCPUs)
	if o.Pin {
		if serverText != "" || loaderText != "" {
			return p, fmt.Errorf("-pin is shorthand for %s 0 %s 1: give -pin or the CPU lists, not both", flagServerCPUs, flagLoaderCPUs)
		}
		p.Server, p.Loader, p.How = cpuset.Of(0), cpuset.Of(1), "-pin"
		for _, s := range []cpuset.Set{p.Server, p.Loader} {
			if err := check(s); err != nil {
				return p, fmt.Errorf("-pin (kvserver on CPU 0, the loader on CPU 1): %w", err)
			}
		}
		return p, nil
	}
	parse := func(flag, text string) (cpuset.Set, error) {
		if text == "" {
			return cpuset.Set{}, nil
		}
		s, err := cpuset.Parse(text)
		if err != nil {
			return s, fmt.Errorf("%s: %w", flag, err)
		}
		if err := check(s); err != nil {
			return s, fmt.Errorf("%s %s: %w; write a list of this machine's CPUs such as 0-3 or 0,2", flag, text, err)
		}
		return s, nil
	}
	kvCPUs, err := parse(flagServerCPUs, serverText)
	if err != nil {
		return p, err
	}
	loaderCPUs, err := parse(flagLoaderCPUs, loaderText)
	if err != nil {
		return p, err
	}
	switch {
	case serverText != "" && loaderText != "":
		if both := kvCPUs.Intersect(loaderCPUs); !both.IsEmpty() {
			return p, fmt.Errorf("%s %s and %s %s overlap (CPUs %s): kvserver and the loader need CPUs of their own; give disjoint lists such as 0-3 and 4-7",
				flagServerCPUs, kvCPUs, flagLoaderCPUs, loaderCPUs, both)
		}
		p.Server, p.Loader, p.How = kvCPUs, loaderCPUs, flagServerCPUs+" and "+flagLoaderCPUs
	case serverText != "":
		rest, err := restOf(affinity, flagServerCPUs, kvCPUs, flagLoaderCPUs, "the loader")
		p.Server, p.Loader, p.How = kvCPUs, rest, flagServerCPUs+", the loader on the rest of this process's CPUs"
		return p, err
	case loaderText != "":
		rest, err := restOf(affinity, flagLoaderCPUs, loaderCPUs, flagServerCPUs, "kvserver")
		p.Server, p.Loader, p.How = rest, loaderCPUs, flagLoaderCPUs+", kvserver on the rest of this process's CPUs"
		return p, err
	case o.Preset == "metastable" && affinity.Len() >= 2 && runtime.GOOS == "linux":
		// Its server's capacity is its store stand-in's, not its CPUs':
		// one CPU each, as -pin, wherever the machine has two.
		p.Server = affinity.First(1)
		p.Loader = affinity.Minus(p.Server).First(1)
		p.How = "the metastable preset's default: kvserver on the first CPU of this process's, the loader on the second"
	default:
		at := defaultSplitAt
		if o.Preset == "scaling" || o.Preset == "writes" {
			// scaling counts kvserver's CPUs; writes measures Pebble's
			// flushes and compactions on kvserver's, which a loader
			// sharing them would take.
			at = scalingSplitAt
		}
		if affinity.Len() >= at && runtime.GOOS == "linux" {
			p.Server, p.Loader = affinity.Halves()
			p.How = fmt.Sprintf("the default: the lower half of this process's CPUs for kvserver, the upper half for the loader (split from %d CPUs)", at)
		} else {
			p.How = fmt.Sprintf("the default below %d CPUs: shared", at)
		}
	}
	return p, nil
}

// restOf is the CPUs of affinity that the set given to flag leaves to
// the other side (whom, with its flag other), refused where none are.
func restOf(affinity cpuset.Set, flag string, given cpuset.Set, other, whom string) (cpuset.Set, error) {
	rest := affinity.Minus(given)
	if rest.IsEmpty() {
		return rest, fmt.Errorf("%s %s leaves none of this process's CPUs (%s) to %s: give %s too, or fewer CPUs to %s",
			flag, given, affinity, whom, other, flag)
	}
	return rest, nil
}

// serverSet is the CPU set v's kvserver starts on: the server's set, or
// under the scaling preset its first v.CPUs CPUs (of the affinity set
// where the two share); empty: not pinned.
func (p Placement) serverSet(v plan.Variant) cpuset.Set {
	set := p.Server
	if v.CPUs > 0 {
		if set.IsEmpty() {
			set = p.Affinity
		}
		return set.First(v.CPUs)
	}
	return set
}

// serverSize is how many CPUs kvserver may use.
func (p Placement) serverSize() int {
	if !p.Server.IsEmpty() {
		return p.Server.Len()
	}
	return p.Affinity.Len()
}

// Checked is options Validate accepted, with each side's CPUs: what Run
// takes, so that they are checked once, before anything starts.
type Checked struct {
	o  plan.Options
	pl Placement
}

// Validate reports the first option that cannot work, naming the flag,
// and places kvserver and the loader on this machine's CPUs.
func Validate(o plan.Options) (Checked, error) {
	if len(o.Clients) > 0 {
		if _, err := client.FromArgs(o.Clients); err != nil {
			return Checked{}, err
		}
	}
	if err := o.Validate(); err != nil {
		return Checked{}, err
	}
	if o.Workload != "" {
		if _, err := workload.ParseMix(o.Workload); err != nil {
			return Checked{}, fmt.Errorf("-workload: %w", err)
		}
	}
	affinity, err := cpuset.Affinity()
	if err != nil || affinity.IsEmpty() {
		affinity, _ = cpuset.Online()
	}
	pl, err := resolvePlacement(&o, affinity, func(s cpuset.Set) error { return s.Check() })
	if err != nil {
		return Checked{}, err
	}
	return Checked{o: o, pl: pl}, nil
}
