package plan

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// The writes preset asks whether a write flood costs reads their
// answers: reads and writes are two resources in front of an LSM (a GET
// costs CPU and a lookup; a PUT a WAL append now and flushes and
// compactions later), and a flood of PUTs that outruns Pebble's flushes
// and compactions fills a single admission queue with writes the store
// stalls, while it could still serve every read in a millisecond.

// The writes preset's defaults (its flags change them): a steady stream
// of WritesReadRate GETs a second over the filled ids for WritesDuration,
// and from WritesFloodAt for WritesFloodFor a closed loop of
// WritesFloodConns connections PUTting WritesFloodValueSize-byte values
// over twice the filled ids, fresh and existing keys alike.
const (
	WritesReadRate       = 3000
	WritesDuration       = 40 * time.Second
	WritesFloodAt        = 10 * time.Second
	WritesFloodFor       = 20 * time.Second
	WritesFloodConns     = 256
	WritesFloodValueSize = 16 << 10
)

// The bounds of the flood's shape flags: a value of 1 byte to 64 KiB, 64
// to 1,024 writers.
const (
	WritesMinValueSize = 1
	WritesMaxValueSize = 64 << 10
	WritesMinConns     = 64
	WritesMaxConns     = 1024
)

// WritesRepeat and WritesQuickRepeat are how often each variant runs,
// interleaved, where -repeat is not given.
const (
	WritesRepeat      = 3
	WritesQuickRepeat = 2
)

// WritesKeyFactor is how many times the filled ids the flood writes
// over: half of its PUTs overwrite a filled id, half add a fresh one.
const WritesKeyFactor = 2

// The targets a writes comparison judges kvserver's default by, against
// direct in the same repetition:
//   - it refuses no more reads than direct, and no more than
//     WritesRefusedShare of them where direct refuses none;
//   - its read p99 stays within WritesP99Factor × direct's in every
//     flood second but a share of WritesP99Seconds (the searches' rule:
//     one of ten seconds may fail);
//   - Pebble never stalls its writes;
//   - its write goodput is at least WritesGoodputShare of direct's.
const (
	WritesRefusedShare = 0.001
	WritesP99Factor    = 1.2
	WritesP99Seconds   = 0.9
	WritesGoodputShare = 0.9
)

// WritesAbsorbWithin is how long after a writes run's read stream ends
// kvserver's metrics are still read while its store has not absorbed the
// flood (result.AbsorbedAt): a store that took writes faster than it
// compacts them pays that debt after the flood, and the writes counted to
// the moment it has are the rate it sustains.
const WritesAbsorbWithin = 30 * time.Second

// WritesInterval is the writes runs' series interval and how often
// kvserver's /metrics is read during them.
const WritesInterval = time.Second

// Writes is the writes preset's plan: every variant Repeat times,
// interleaved (each variant's first run, then each one's second, …) so
// that the machine's drift falls on all alike; each run on a fresh
// kvserver, with the read stream and the flood at once.
type Writes struct {
	Variants []Variant
	Repeat   int
	// ReadRate is the read stream's GETs a second (open model) over the
	// filled ids, for Duration.
	ReadRate float64
	Duration time.Duration
	// FloodAt and FloodFor are when the flood starts, from the read
	// stream's start, and how long it sends; FloodConns its connections
	// (a closed loop: each sends its next PUT when the last is answered),
	// FloodValueSize its values' size, FloodKeys the ids it writes
	// (WritesKeyFactor × the filled ones).
	FloodAt, FloodFor time.Duration
	FloodConns        int
	FloodValueSize    int
	FloodKeys         uint64
	Interval          time.Duration
}

// FloodEnd is when the flood stops sending, from the run's start.
func (w *Writes) FloodEnd() time.Duration { return w.FloodAt + w.FloodFor }

// Runs is how many runs w makes.
func (w *Writes) Runs() int { return len(w.Variants) * max(w.Repeat, 1) }

// Order is the runs in the order they are made: every variant's
// repetition 1, then every variant's repetition 2, … (interleaved).
func (w *Writes) Order() []WritesRunRef {
	var out []WritesRunRef
	for rep := 1; rep <= max(w.Repeat, 1); rep++ {
		for _, v := range w.Variants {
			out = append(out, WritesRunRef{Variant: v, Repeat: rep})
		}
	}
	return out
}

// WritesRunRef is one run of the writes preset: a variant and its
// repetition.
type WritesRunRef struct {
	Variant Variant
	Repeat  int
}

// writesPools are the pools a user would try beside the default: the
// full preset's variants after direct and kvserver's default.
var writesPools = []string{"fifo", "lifo", "adaptive"}

// newWrites is the preset's plan from o: direct, kvserver's default
// (auto), the peer (failsafe-go's limiter, at its defaults), and in the
// full preset the pools of -pools (default fifo, lifo and adaptive) at
// their defaults; -quick runs direct, the default and the peer only.
func newWrites(o *Options) *Writes {
	d := *o
	d.applyWritesDefaults()
	o = &d
	w := &Writes{
		Repeat: o.Repeat, ReadRate: o.ReadRate, Duration: o.ReadFor,
		FloodAt: o.FloodAt, FloodFor: o.FloodFor, FloodConns: o.FloodConns, FloodValueSize: o.FloodValueSize,
		FloodKeys: WritesKeyFactor * o.Keys, Interval: WritesInterval,
	}
	w.Variants = []Variant{{Pool: Baseline}, {Pool: Default}, {Pool: PeerPool}}
	if o.Quick {
		return w
	}
	pools := writesPools
	if o.Pools != nil {
		pools = o.Pools
	}
	for _, pl := range pools {
		v := Variant{Pool: pl}
		if pl == Baseline || pl == AutoPool || slices.Contains(w.Variants, v) {
			continue // direct, the default (auto) and the peer run already
		}
		w.Variants = append(w.Variants, v)
	}
	return w
}

// applyWritesDefaults fills the writes preset's settings the flags left
// at 0 with its defaults.
func (o *Options) applyWritesDefaults() {
	o.ReadRate, o.ReadFor = cmp.Or(o.ReadRate, WritesReadRate), cmp.Or(o.ReadFor, WritesDuration)
	o.FloodAt, o.FloodFor = cmp.Or(o.FloodAt, WritesFloodAt), cmp.Or(o.FloodFor, WritesFloodFor)
	o.FloodConns, o.FloodValueSize = cmp.Or(o.FloodConns, WritesFloodConns), cmp.Or(o.FloodValueSize, WritesFloodValueSize)
}

// validateWrites refuses what the writes preset cannot run, and the
// writes flags under another preset.
func (o *Options) validateWrites() error {
	given := o.ReadRate != 0 || o.ReadFor != 0 || o.FloodAt != 0 || o.FloodFor != 0 || o.FloodConns != 0 || o.FloodValueSize != 0
	if o.Preset != "writes" {
		if given {
			return fmt.Errorf("-read-rate, -read-for, -flood-at, -flood-for, -flood-conns and -flood-value-size shape the writes preset's runs; -preset %s has none", o.Preset)
		}
		return nil
	}
	w := *o
	w.applyWritesDefaults()
	if flag := o.variantFlag(); flag != "" {
		return fmt.Errorf("%s: the writes preset runs direct, kvserver's default and the pools of -pools at their defaults; leave %s out", flag, flag)
	}
	switch {
	case o.Workload != "" && o.Workload != "get":
		return fmt.Errorf("-workload %s: the writes preset's workload is its own (a read stream of GETs and a flood of PUTs); leave -workload out", o.Workload)
	case w.ReadRate < 0:
		return fmt.Errorf("-read-rate %v: want GETs a second above 0", w.ReadRate)
	case w.ReadFor < 0 || w.FloodAt < 0 || w.FloodFor < 0:
		return fmt.Errorf("-read-for %v, -flood-at %v, -flood-for %v: want lengths above 0", w.ReadFor, w.FloodAt, w.FloodFor)
	case w.FloodAt+w.FloodFor > w.ReadFor:
		return fmt.Errorf("-flood-at %v + -flood-for %v ends past -read-for %v: the read stream must last the whole flood; start the flood earlier, shorten it, or read longer", w.FloodAt, w.FloodFor, w.ReadFor)
	case w.FloodConns < WritesMinConns || w.FloodConns > WritesMaxConns:
		return fmt.Errorf("-flood-conns %d: want %d to %d writers", w.FloodConns, WritesMinConns, WritesMaxConns)
	case w.FloodValueSize < WritesMinValueSize || w.FloodValueSize > WritesMaxValueSize:
		return fmt.Errorf("-flood-value-size %d: want %d to %d bytes (64 KiB)", w.FloodValueSize, WritesMinValueSize, WritesMaxValueSize)
	}
	return nil
}
