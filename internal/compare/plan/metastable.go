package plan

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// The metastable preset asks which admission (pool, limit, deadlines)
// gets back to its base load after a spike when clients time out and
// retry. A metastable failure (Bronson et al., HotOS 2021) is a server
// that stays down after its trigger: the retries keep the queue full.

// The metastable preset's store stand-in: every store operation first
// sleeps MetaIODelay, at most MetaIOConcurrency at a time, so that the
// server's capacity (about MetaIOConcurrency / MetaIODelay, 16,000 op/s)
// is the store's and not the machine's: the same on any machine, and well
// under what the loader can send on one CPU.
const (
	MetaIODelay       = time.Millisecond
	MetaIOConcurrency = 16
)

// MetaShare is the base rate's share of direct's validated saturation:
// low enough that every variant serves it with room to spare, so that
// a variant still short of it after the spike is held down by its
// clients' retries, not by its capacity.
const MetaShare = 0.6

// MetaFactor is the spike's multiple of the base rate (-factor changes
// it): 1.5 × direct's validated saturation. Not 2 (1.2 × it): the
// saturation is the highest rate that kept p99 under the SLO, below what
// the store serves flat out, and at 2× the spike often did not overload
// the server at all, so "recovered" said nothing. At
// 2.5× the spike asks about 1.25 × the store's capacity, for the whole
// spike.
const MetaFactor = 2.5

// MetaModels name the client populations of the metastable preset:
// internal/loadgen/client's named models (client.Names, which a test
// holds this list to), resolved by the runner with client.Named:
// from none, the lab's classic client (no timeout of its own, no retry),
// to the ones that give up after 1 s and retry twice, at once or with
// backoff, within a budget or throttling themselves. The plan keeps
// names only, so that the report is written without the loader.
var MetaModels = []string{"none", "untuned", "retry", "backoff", "budget", "throttle"}

// NoTimeoutModel is the model whose clients have no timeout of their
// own, hence no deadline to send.
const NoTimeoutModel = "none"

// CustomModel names the one population of a preset run with client flags
// (Options.Clients, kept in Metastable.ClientArgs).
const CustomModel = "custom"

// MetaVariant is one admission under test: a kvserver variant, and
// whether its clients send their deadline (X-Request-Timeout-Ms), which
// kvserver honours by dropping a job whose client has gone before it
// reaches the store. Deadlines are the clients' doing, so they are not
// kvserver flags.
type MetaVariant struct {
	Variant   Variant
	Deadlines bool `json:",omitempty"`
}

// Name is how tables and charts label m: the variant's name without the
// workers every pool of the preset has, with "+deadlines" where its
// clients send them.
func (m MetaVariant) Name() string { return m.label(Variant.Name) }

// Slug is Name made safe for a folder name.
func (m MetaVariant) Slug() string { return m.label(Variant.Slug) }

func (m MetaVariant) label(name func(Variant) string) string {
	v := m.Variant
	v.Workers = 0
	if m.Deadlines {
		return name(v) + "+deadlines"
	}
	return name(v)
}

// MetaTiming is the shape of every metastable run: Base seconds at the
// base rate, Spike at Factor × it, After at the base rate again; the
// loader's series cut into Interval slices. Hold is how long useful
// goodput must stay back at MetaRecovered of the base rate for the
// variant to count as recovered (and how long, at the run's end, it must
// stay under MetaCollapsed of it to count as collapsed); Recovery is the
// most a recommended configuration may take to recover.
type MetaTiming struct {
	Base, Spike, After time.Duration
	Factor             float64
	Interval           time.Duration
	Hold, Recovery     time.Duration
}

// Duration is a run's length.
func (t MetaTiming) Duration() time.Duration { return t.Base + t.Spike + t.After }

// SpikeEnd is when the spike ends, from the run's start.
func (t MetaTiming) SpikeEnd() time.Duration { return t.Base + t.Spike }

// MetaFullTiming is the full preset's: 2 s at the base rate, an 8 s
// spike at 2.5× it (1.5 × direct's saturation, about 1.25 × what the
// store serves flat out), which builds seconds of backlog, more than the
// clients' 1 s timeout, so that clients time out and retry; 28 s after it
// show whether the variant came back (a recovery up to 23 s after the
// spike, with its 5 s hold). 8 s at 2.5× asks more work beyond the base
// rate (12 base-rate seconds) than 10 s at 2× (10). The lengths keep the
// 38 runs, direct's search and a start per run within half an hour.
func MetaFullTiming() MetaTiming {
	return MetaTiming{Base: 2 * time.Second, Spike: 8 * time.Second, After: 28 * time.Second, Factor: MetaFactor,
		Interval: time.Second, Hold: 5 * time.Second, Recovery: 5 * time.Second}
}

// MetaQuickTiming is -quick's: 14 runs of 10 s (1 s base, a 3 s spike,
// 6 s after) with a 500 ms series; with the fill, direct's search and
// a start and stop per run (about 2 s each), under four minutes. A 3 s
// spike builds about 0.6 s of backlog, under the clients' 1 s timeout:
// quick shows the machinery and which variants hold a short spike; the
// full preset is the one that judges. Recovery is judged on 2 s of hold.
func MetaQuickTiming() MetaTiming {
	return MetaTiming{Base: time.Second, Spike: 3 * time.Second, After: 6 * time.Second, Factor: MetaFactor,
		Interval: 500 * time.Millisecond, Hold: 2 * time.Second, Recovery: 5 * time.Second}
}

// MetaRecovered and MetaCollapsed are the shares of the base rate that
// useful goodput must stay at or above to count as recovered, and below
// which it counts as collapsed at the run's end. MetaP99 is the useful
// answers' p99 a recommended configuration gets back under.
// MetaTarget is the share of the base rate a recommended configuration's
// useful goodput gets back to within the timing's Recovery, and keeps for
// its Hold: the target it is recommended by, looser than the recovery
// the tables report (MetaRecovered) and as strict about staying there.
const (
	MetaRecovered = 0.95
	MetaCollapsed = 0.5
	MetaP99       = 50 * time.Millisecond
	MetaTarget    = 0.9
)

// MetaClientShare and MetaOwnLag bound what a run's client side may use
// before the run is not judged: the loader's CPU over any interval as a
// share of its CPUs, and the p99 lateness of the attempts it sent on a
// free connection (its own lag, not a wait for the server) in more than
// MetaOwnLateIntervals intervals. Real clients are many hosts whose
// timeouts, reconnects and retries take nothing from each other's first
// tries; one loader shares them on a few CPUs, so its cost grows with the
// storm it causes, and near its limit it sends first tries late and
// makes the storm it measures. Waits for a free connection are counted
// and shown, not held against the client side: a client population's
// connections are finite, and a server that holds them all is the
// server's doing.
const (
	MetaClientShare      = 0.7
	MetaOwnLag           = 10 * time.Millisecond
	MetaOwnLateIntervals = 1
)

// MetaBoundedCap is the queue bound of the preset's bounded fifo: about
// 20 ms of what the store stand-in serves, far under
// the clients' 1 s timeout. A queue that short refuses the excess of a
// spike on arrival, where a 503 costs the least and its client hears at
// once, and what it admits is served while its client still waits; the
// pools at their defaults queue up to one job per connection (-cap
// auto), seconds of work at this store's speed.
const MetaBoundedCap = 256

// Metastable is the metastable preset's plan: every client model × every
// variant (but the deadline variants under a client with no timeout of
// its own, which has no deadline to send), Repeat times each, on a fresh
// kvserver, at Share of direct's validated saturation with a spike.
type Metastable struct {
	Models   []string
	Variants []MetaVariant
	Share    float64
	Timing   MetaTiming
	Repeat   int
	// ClientArgs are the client flags of the CustomModel population, the
	// preset's one where given.
	ClientArgs []string `json:",omitempty"`
	// StoreSlots is how many operations of MetaIODelay the store
	// stand-in serves at once (-io-concurrency, and every pool's
	// -workers); 0 in comparisons made before it could be set: then
	// MetaIOConcurrency.
	StoreSlots int `json:",omitempty"`
	// FastStore: the runs were on plain Pebble, with no store stand-in.
	FastStore bool `json:",omitempty"`
	// SizeStorms: no -store-slots was given, so the runner gives each
	// client population a store of as many slots as the loader can hold
	// the worst second of its storm on (see StormSlots): StoreSlots is
	// then the store direct's first search and the loader's calibration
	// ran on, and the size of the populations whose storm fits it.
	SizeStorms bool `json:",omitempty"`
}

// Slots is m's StoreSlots, MetaIOConcurrency where unset; 0 on the fast
// store, which has no stand-in.
func (m *Metastable) Slots() int {
	if m.FastStore {
		return 0
	}
	return cmp.Or(m.StoreSlots, MetaIOConcurrency)
}

// Applies tells whether m runs variant v under model: a deadline is the
// client's timeout, so a client without one sends none.
func (m *Metastable) Applies(model string, v MetaVariant) bool {
	return !v.Deadlines || model != NoTimeoutModel
}

// Runs is how many runs m makes.
func (m *Metastable) Runs() int {
	n := 0
	for _, c := range m.Models {
		for _, v := range m.Variants {
			if m.Applies(c, v) {
				n++
			}
		}
	}
	return n * max(m.Repeat, 1)
}

// newMetastable is the preset's plan from o; store puts a variant in
// front of the store stand-in (as direct's search ran).
func newMetastable(o *Options, store func(Variant) Variant) *Metastable {
	t := MetaFullTiming()
	if o.Quick {
		t = MetaQuickTiming()
	}
	t.Factor = cmp.Or(o.Factor, t.Factor)
	m := &Metastable{Models: slices.Clone(MetaModels), Share: MetaShare, Timing: t, Repeat: max(o.Repeat, 1)}
	if len(o.Clients) > 0 {
		m.Models, m.ClientArgs = []string{CustomModel}, slices.Clone(o.Clients)
	}
	bounded := MetaVariant{Variant: Variant{Pool: "fifo", Cap: MetaBoundedCap, CapSet: true}}
	// Direct, kvserver's default, and the peers, each at its own defaults
	// as the default is: failsafe-go's limiter with its queueing, and with
	// its prioritizer (marked retries at a lower priority).
	vs := []MetaVariant{{Variant: Variant{Pool: Baseline}}, {Variant: Variant{Pool: Default}},
		{Variant: Variant{Pool: PeerPool}}, {Variant: Variant{Pool: PeerPriorityPool}}}
	if o.Quick {
		// Quick: direct, kvserver's default, the peers and the bounded
		// fifo under every client population.
		vs = append(vs, bounded)
	} else {
		vs = append(vs, MetaVariant{Variant: Variant{Pool: "fifo"}}, MetaVariant{Variant: Variant{Pool: "lifo"}},
			MetaVariant{Variant: Variant{Pool: "adaptive"}}, bounded, MetaVariant{Variant: Variant{Pool: "fifo", Limit: "gradient2"}},
			MetaVariant{Variant: Variant{Pool: "fifo"}, Deadlines: true}, MetaVariant{Variant: Variant{Pool: "lifo"}, Deadlines: true})
	}
	for _, v := range vs {
		// -pools keeps direct, the default and the variants of the pools
		// it names: a shorter run of the same question (the full preset's
		// every variant takes about 45 minutes).
		if p := v.Variant.Pool; o.Pools == nil || p == Baseline || p == Default || slices.Contains(o.Pools, p) {
			v.Variant = store(v.Variant)
			m.Variants = append(m.Variants, v)
		}
	}
	return m
}

// validateMetastable refuses the options the metastable preset has no
// use for: its variants are fixed (they are the question), and its one
// workload is GET.
func (o *Options) validateMetastable() error {
	if flag := o.variantFlag(); flag != "" {
		return fmt.Errorf("%s: the metastable preset runs a fixed set of variants (direct, the default, failsafe, failsafe-priority, fifo, lifo, adaptive, fifo cap=256, fifo limit=gradient2, fifo and lifo +deadlines; -pools keeps fewer); leave %s out", flag, flag)
	}
	if o.Workload != "" && o.Workload != "get" {
		return fmt.Errorf("-workload %s: the metastable preset runs GETs only (its store stand-in delays reads); leave -workload out", o.Workload)
	}
	return nil
}
