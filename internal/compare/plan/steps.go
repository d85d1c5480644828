package plan

import (
	"math"
	"time"
)

// FixedShare is the fixed-rate step's share of direct's saturation (or,
// under OwnRates, of the variant's own).
const FixedShare = 0.7

// ProbeShare is the probes' share of direct's saturation around an
// overload step: below saturation, so that "normal" is stable.
const ProbeShare = 0.5

// LittleHeadroom is how many times Little's law's L = rate × W a step
// opens connections: with L every burst would wait in the loader (its
// send lag, measured as latency once corrected); 2L costs idle sockets.
const LittleHeadroom = 2

// MinConns is the fewest connections a step starts with: the loader's
// default, the seeds' 64 connections.
const MinConns = 64

// LittleConns is ceil(LittleHeadroom × rate × w), at least MinConns
// (also for an unknown w, 0) and at most maxConns.
func LittleConns(rate float64, w time.Duration, maxConns int) int {
	n := int(math.Ceil(LittleHeadroom * rate * w.Seconds()))
	return max(MinConns, min(n, maxConns))
}

// Steps is one workload's step plan: the load every variant's fixed-rate
// step, full-load round and overload step get, sized once from direct's
// search so that every variant of a step has the same clients (what it
// found, so a workload's result keeps it).
type Steps struct {
	Fixed    *Load `json:",omitempty"`
	FullLoad *Load `json:",omitempty"`
	Overload *Load `json:",omitempty"`
}

// Load is how one step loads kvserver.
type Load struct {
	// Closed: a closed loop (the full-load round), and Rate the rate its
	// connections were sized for; otherwise Rate is what the step asks
	// (under OwnRates direct's, which sized Conns).
	Closed bool `json:",omitempty"`
	Rate   float64
	// Latency is the answer time Little's law sized Conns with: from
	// direct's saturation search (0: none known, Conns is MinConns).
	Latency time.Duration
	// Conns are opened before the step starts; MaxConns is the most the
	// loader may open while every one is busy (Conns: no growth).
	Conns, MaxConns int
}

// ProfileKinds are the profiles captured per pool in a profile run, in
// the order the report lists them.
var ProfileKinds = []string{"cpu", "mutex", "block", "allocs", "heap"}

// ProfileArgs are the profile runs' extra kvserver flags: sampling costs
// time the timing runs must not pay.
var ProfileArgs = []string{"-mutex-profile-fraction", "100", "-block-profile-rate", "10000"}

// BusyCores is the quiet check's threshold: before a step, the runner
// waits (up to Options.QuietWait) while other processes keep more cores
// than this busy.
const BusyCores = 1.5
