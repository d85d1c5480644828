package plan

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/ratio"
)

// Options configure one comparison; cmd/loadtest's compare subcommand fills
// them from flags. The zero value of a field means its default (see
// DefaultOptions and Timing).
type Options struct {
	Preset string
	// Kvserver is the kvserver binary to start.
	Kvserver string
	// Pools and Policies restrict the preset's variants (nil: the preset's).
	Pools    []string
	Policies []string
	// Execs runs each queueing variant once per -exec mode given
	// ("handler", "worker"; nil: kvserver's default, no -exec flag).
	Execs []string
	// Limits are the adaptive -limit algorithms of the policies,
	// overload and slow-backend presets' limit variants, on fifo and lifo
	// (nil: all of Limits; empty: none).
	Limits []string
	// QueueTimeouts (policies and overload presets) adds each queueing
	// pool once per value, at its defaults but for -queue-timeout: the
	// sweep that chooses that default.
	QueueTimeouts []time.Duration
	// Caps (capacity preset) and Workers (slow-backend preset) are swept.
	Caps    []int
	Workers []int
	// Workload replaces the preset's workloads with one ("" = the preset's).
	Workload  string
	Keys      uint64
	ValueSize int
	// Repeat is how often each saturation search runs (median and spread).
	Repeat int
	// SLO is the corrected p99 a rate must keep to count as sustained.
	SLO time.Duration
	// Quick: 100k keys, short steps, one repeat, one workload per preset.
	Quick bool
	// ServerCPUs and LoaderCPUs are the CPU lists (Linux cpu-list syntax)
	// kvserver and the loader run on; "" leaves the side to the default
	// (see resolvePlacement): with one list given, the other side gets
	// the rest of this process's CPUs.
	ServerCPUs, LoaderCPUs string
	// Pin is shorthand for ServerCPUs "0", LoaderCPUs "1".
	Pin bool
	// MaxConns caps the connections the loader opens in an overload step.
	MaxConns int
	// Factor multiplies direct's saturation for the overload step (0: the
	// preset's, 2 or 10 for the overload preset).
	Factor float64
	// Rate, if set, is taken as direct's saturation instead of searching.
	Rate float64
	// Clients (the metastable preset) are client flags as given
	// (loadtest attack's -clients and the flags that override it): the
	// preset's runs are then of that one population (CustomModel) instead
	// of its named ones. The runner reads them (client.FromArgs); the
	// report shows them.
	Clients []string `json:",omitempty"`
	// StoreSlots (the metastable preset) is how many operations its
	// store stand-in serves at once (0: MetaIOConcurrency): fewer make a
	// slower store, whose storms a loader on fewer CPUs can hold.
	StoreSlots int
	// FastStore (the metastable preset) runs it on plain Pebble, with no
	// store stand-in: kvserver's CPU is then its limit, and its storms
	// are several times larger.
	FastStore bool `json:",omitempty"`
	// The writes preset's runs (0: its defaults, plan.Writes*): the read
	// stream's GETs a second (ReadRate) and length (ReadFor); the flood's
	// start from the read stream's (FloodAt), length (FloodFor),
	// connections (FloodConns) and value size in bytes (FloodValueSize).
	ReadRate       float64       `json:",omitempty"`
	ReadFor        time.Duration `json:",omitempty"`
	FloodAt        time.Duration `json:",omitempty"`
	FloodFor       time.Duration `json:",omitempty"`
	FloodConns     int           `json:",omitempty"`
	FloodValueSize int           `json:",omitempty"`
	// IODelay and IODelayDist are the slow-backend preset's store delay.
	IODelay     time.Duration
	IODelayDist string
	// Out is the parent folder of the report's folder.
	Out string
	// Timing overrides the step lengths (nil: Quick or full defaults).
	Timing *Timing
	// QuietWait is the most a step waits for a loaded machine to calm
	// down (0: do not check).
	QuietWait time.Duration
}

// Timing is the length of every kind of step.
type Timing struct {
	SatStep, SatValidate, SatCooldown time.Duration
	SatStartRate, SatMaxRate          float64
	SatPrecision                      float64
	Fixed                             time.Duration
	Overload                          time.Duration
	// ProbeBaseline is the probe run before the overload; RecoverProbes
	// one-second probes follow it.
	ProbeBaseline time.Duration
	RecoverProbes int
	ProbeLength   time.Duration
	// ProfileSeconds is the length of each profile capture.
	ProfileSeconds int
	// RequestTimeout is the loader's per-request timeout in overload steps.
	RequestTimeout time.Duration
	// Closed is each round of the closed-loop cross-check, ClosedRounds
	// how many rounds it runs (for a median and a spread); 0 runs none.
	Closed       time.Duration
	ClosedRounds int
	// ClosedPairs is how many closed-loop rounds of Closed each variant
	// runs paired with direct (one of each, alternating), for its ratios
	// to direct with a 95 % interval; 0 runs none. MinPairs is the fewest
	// that bound an interval.
	ClosedPairs int `json:",omitempty"`
	// WarmUp is the closed loop of GETs every kvserver serves once idle
	// after its start, before its first measured step, measured by
	// nobody: a fresh server on a copy of the store answers its first
	// hundreds of thousands of reads from a cold block cache, and its
	// runtime has not grown its pools and heap yet. 0: none.
	WarmUp time.Duration `json:",omitempty"`
	// PairRound is the length of each paired round (0: Closed). Many
	// short pairs bound a tighter interval than few long ones at the same
	// load: a server's throughput moves from round to round whatever
	// their length, and the interval of a median narrows with the pairs'
	// count.
	PairRound time.Duration `json:",omitempty"`
	// PairPause is the pause before each paired round (0: SatCooldown).
	// A closed loop
	// leaves no backlog to drain, unlike an open step past saturation:
	// its last requests are answered within milliseconds of its end.
	PairPause time.Duration `json:",omitempty"`
	// AnchorRounds is how many closed-loop rounds of SatStep each
	// saturation search runs on its own server before its first step,
	// over MinConns connections: their median bounds the search
	// (saturate.Config.Anchor), whose ramp starts at AnchorShare of it
	// and asks no more until a step there held. 0: none, the ramp starts
	// from SatStartRate or half of direct's first saturation.
	AnchorRounds int `json:",omitempty"`
}

// AnchorShare is where an anchored search's ramp starts, as a share of its
// closed loop's throughput: three quarters, because an open model's
// saturation under the SLO comes out close to the closed loop's, and a
// start at half spends a step far below it.
const AnchorShare = 0.75

// PairRoundLength is the length of each paired round: PairRound, else
// Closed.
func (t Timing) PairRoundLength() time.Duration { return cmp.Or(t.PairRound, t.Closed) }

// PairPauseLength is the pause before each paired round: PairPause, else
// SatCooldown.
func (t Timing) PairPauseLength() time.Duration { return cmp.Or(t.PairPause, t.SatCooldown) }

// MinPairs is the fewest pairs whose median ratio has a finite 95 %
// interval.
const MinPairs = ratio.MinPairs

// FullTiming is the default, for numbers worth publishing.
func FullTiming() Timing {
	return Timing{
		SatStep: 3 * time.Second, SatValidate: 10 * time.Second, SatCooldown: time.Second,
		SatStartRate: 1000, SatMaxRate: 1_000_000, SatPrecision: 0.05,
		Fixed: 20 * time.Second, Overload: 20 * time.Second,
		ProbeBaseline: 5 * time.Second, RecoverProbes: 5, ProbeLength: time.Second,
		ProfileSeconds: 10, RequestTimeout: 2 * time.Second,
		Closed: 5 * time.Second, ClosedRounds: 3, ClosedPairs: FullPairs, PairRound: time.Second,
		PairPause: PairPause, WarmUp: FullWarmUp, AnchorRounds: 3,
	}
}

// FullPairs is a full comparison's paired rounds, each of a second:
// enough to bound the closed loop's ratios to about ±5 %. A server's
// throughput moves from one second to the next with little memory, so a
// pair's two rounds share little of it and an interval narrows only as
// the square root of the pairs. About 3.5 minutes a pool.
const FullPairs = 100

// PairPause is the pause before each paired round, full or quick: a
// closed loop leaves no backlog to drain (its last requests are answered
// within milliseconds of its end), so the pause only lets the last
// round's connections close. Longer would leave the pairs idle (the
// search's 1 s cooldown: half their time) and move a pair's two rounds
// apart, where the machine's speed shares less between them.
const PairPause = 50 * time.Millisecond

// FullWarmUp is a full comparison's warm-up. Without one, a fresh
// server's closed loop rises round by round while its block cache fills,
// and rounds paired with it measure the filling, not the pool. Ten
// seconds of a closed loop of reads touch most of a full store's blocks.
const FullWarmUp = 10 * time.Second

// QuickTiming is -quick's: the whole matrix in minutes, numbers indicative.
// Its searches take steps of 1.1 s (100 ms intervals, ten judged) to a
// 5 % bracket and validate over 2.2 s: a bracket must be narrower than
// the ±10 % that quick runs back to back should agree within. Three
// recovery probes follow the overload, so that one slow second does not
// decide the verdict.
func QuickTiming() Timing {
	return Timing{
		SatStep: 1100 * time.Millisecond, SatValidate: 2200 * time.Millisecond, SatCooldown: 200 * time.Millisecond,
		SatStartRate: 2000, SatMaxRate: 1_000_000, SatPrecision: 0.05,
		Fixed: 1500 * time.Millisecond, Overload: 2 * time.Second,
		ProbeBaseline: 500 * time.Millisecond, RecoverProbes: 3, ProbeLength: time.Second,
		ProfileSeconds: 1, RequestTimeout: 2 * time.Second,
		Closed: time.Second, ClosedRounds: 3, ClosedPairs: MinPairs, PairPause: PairPause,
		WarmUp:       time.Second, // 100,000 ids: a second reads every block
		AnchorRounds: 3,
	}
}

// DefaultOptions are the documented defaults of `loadtest compare`.
func DefaultOptions() Options {
	return Options{
		Preset: "queues", Kvserver: "bin/kvserver",
		Caps: []int{32, 64, 128, 256, 512, 1024}, Workers: []int{2, 8, 64},
		Keys: 2_000_000, ValueSize: 500, Repeat: 3, SLO: 100 * time.Millisecond,
		MaxConns: 4096, IODelay: time.Millisecond, IODelayDist: "fixed",
		Out: "results", QuietWait: time.Minute,
	}
}

// QuickKeys is the store size of -quick and of the overload preset.
const QuickKeys = 100_000

// ApplyDefaults sets what depends on the preset and -quick where the user
// left the defaults: the overload, metastable and writes presets and
// quick mode use 100,000 ids (the overload preset as loadtest/overload.sh
// did), and one repeat (the writes preset: WritesRepeat, quick
// WritesQuickRepeat; and its runs' shape, applyWritesDefaults).
func (o *Options) ApplyDefaults(keysGiven, repeatGiven bool) {
	if !keysGiven && (o.Quick || o.Preset == "overload" || o.Preset == "metastable" || o.Preset == "writes") {
		o.Keys = QuickKeys
	}
	if o.Quick {
		o.QuietWait = min(o.QuietWait, 10*time.Second)
	}
	switch {
	case o.Preset == "writes":
		o.applyWritesDefaults()
		if !repeatGiven {
			o.Repeat = WritesRepeat
			if o.Quick {
				o.Repeat = WritesQuickRepeat
			}
		}
	case !repeatGiven && (o.Quick || o.Preset == "overload" || o.Preset == "metastable"):
		o.Repeat = 1 // one search sets the rate; nothing else is repeated (metastable: each run once)
	}
}

// StepTiming is o's step lengths: Timing, else by Quick.
func (o *Options) StepTiming() Timing {
	switch {
	case o.Timing != nil:
		return *o.Timing
	case o.Quick:
		return QuickTiming()
	}
	t := FullTiming()
	switch o.Preset {
	case "overload":
		t.Overload = OverloadPresetDuration
	case "writes":
		// Its store is 100,000 ids (QuickKeys), whose every block a
		// second of reads touches, and its runs begin with FloodAt of
		// reads before the flood.
		t.WarmUp = QuickTiming().WarmUp
	}
	return t
}

// OverloadPresetDuration is the overload preset's step in full mode, as
// long as loadtest/overload.sh's, so that RSS growth shows.
const OverloadPresetDuration = time.Minute

// Validate reports the first option that cannot work, naming the flag.
// It checks what needs no machine and no loader: compare.Validate adds
// the client flags, the workload's syntax and the CPU sets. Each -cap and
// -workers item's range is its flag's parser's, in cmd/loadtest.
func (o *Options) Validate() error {
	if !slices.Contains(Presets, o.Preset) {
		return fmt.Errorf("-preset: unknown preset %q; valid: %s", o.Preset, strings.Join(Presets, ", "))
	}
	if err := cmp.Or(
		checkNames("pool (-pools)", o.Pools, slices.Concat(Pools, []string{AutoPool}, Peers)),
		checkNames("policy (-policies)", o.Policies, Policies),
		checkNames("exec mode (-execs)", o.Execs, Execs),
		checkNames("limit (-limits)", o.Limits, Limits),
	); err != nil {
		return err
	}
	switch {
	case o.Kvserver == "":
		return errors.New("-kvserver: the kvserver binary is required (make build puts it in bin/kvserver)")
	case o.Keys == 0:
		return errors.New("-keys must be at least 1")
	case o.ValueSize < 0:
		return fmt.Errorf("-value-size %d is negative", o.ValueSize)
	case o.Repeat < 1:
		return fmt.Errorf("-repeat %d: at least 1", o.Repeat)
	case o.SLO <= 0:
		return errors.New("-slo must be positive")
	case o.MaxConns < 64:
		return fmt.Errorf("-max-conns %d: at least 64, the loader's starting connections", o.MaxConns)
	case o.StoreSlots < 0 || o.StoreSlots > 4096:
		return fmt.Errorf("-store-slots %d: want 1 to 4096 operations at once (0: %d)", o.StoreSlots, MetaIOConcurrency)
	case len(o.Clients) > 0 && o.Preset != "metastable":
		return fmt.Errorf("%s: client flags set the metastable preset's clients; -preset %s runs none", o.Clients[0], o.Preset)
	case o.FastStore && o.Preset != "metastable":
		return fmt.Errorf("-fast-store sets the metastable preset's store; -preset %s has its own", o.Preset)
	case o.FastStore && o.StoreSlots > 0:
		return fmt.Errorf("-store-slots %d sizes the store stand-in, which -fast-store leaves out: give one of them", o.StoreSlots)
	case o.StoreSlots > 0 && o.Preset != "metastable":
		return fmt.Errorf("-store-slots sets the metastable preset's store stand-in; -preset %s has none", o.Preset)
	case o.Factor < 0 || (o.Factor > 0 && o.Factor <= 1):
		return fmt.Errorf("-factor %v: the overload step must ask for more than saturation (> 1)", o.Factor)
	case o.Rate < 0:
		return fmt.Errorf("-rate %v is negative", o.Rate)
	case o.Preset == "capacity" && len(o.Caps) == 0:
		return errors.New("-cap: the capacity preset needs at least one capacity")
	case o.Preset == "slow-backend" && len(o.Workers) == 0:
		return errors.New("-workers: the slow-backend preset needs at least one worker count")
	case o.Preset == "slow-backend" && o.IODelay <= 0:
		return errors.New("-io-delay: the slow-backend preset needs a positive store delay")
	case o.IODelayDist != "" && o.IODelayDist != "fixed" && o.IODelayDist != "exp":
		return fmt.Errorf("-io-delay-dist %q: valid: fixed, exp", o.IODelayDist)
	}
	if o.Preset == "metastable" {
		if err := o.validateMetastable(); err != nil {
			return err
		}
	}
	return o.validateWrites()
}

// variantFlag is the first flag given of those that add variants to a
// preset's grid (-policies, -execs, -limits, -queue-timeouts), "" where
// none is: the presets whose variants are their own refuse them.
func (o *Options) variantFlag() string {
	switch {
	case o.Policies != nil:
		return "-policies"
	case o.Execs != nil:
		return "-execs"
	case o.Limits != nil:
		return "-limits"
	case o.QueueTimeouts != nil:
		return "-queue-timeouts"
	}
	return ""
}
