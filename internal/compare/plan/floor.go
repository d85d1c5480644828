package plan

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kvpool/kvpool/internal/cpuset"
)

// The store states a floor measures kvserver in.
const (
	// FloorFresh: just filled, the data still in Pebble's memtable (a fill
	// smaller than -memtable-mb).
	FloorFresh = "fresh"
	// FloorCompacted: filled, then flushed and compacted into sstables
	// (kvserver -compact-at-start).
	FloorCompacted = "compacted"
)

// FloorBare names the bare handler as Floor.Base.
const FloorBare = "bare"

// Floor is what `loadtest floor` runs: kvserver -pool direct and a base
// (the bare fasthttp handler, or another kvserver) on the same CPUs, in
// paired rounds per store state and workload.
type Floor struct {
	Kvserver, Base string   // the binaries; Base may be FloorBare
	Args, BaseArgs []string // their flags besides -pool direct
	// ServerCPUs are both servers', LoaderCPUs the loader's (floor.json
	// keeps them as text); CPUCounts, run in turn, the first n of
	// ServerCPUs each (nil: all of them, once).
	ServerCPUs, LoaderCPUs cpuset.Set `json:"-"`
	CPUCounts              []int
	Rounds, Conns          int
	Round, Warmup          time.Duration
	Rate                   float64 // requests per second to each server in a round, open loop; 0: a closed loop
	Keys                   uint64
	ValueSize              int
	Workloads, States      []string
	IdleWithin             time.Duration // after a PUT run, how long kvserver may take to settle
	ProfileDir             string        // "": no profiles
	Out                    string        `json:"-"` // "": no report folder
	Self                   string        `json:"-"` // this binary, to start bare-server with
	SelfEnv                []string      `json:"-"` // added to its environment (tests)
}

// Names are the base's name ("bare" for the bare handler, else "base")
// and kvserver's.
func (o *Floor) Names() [2]string {
	if o.Base == FloorBare {
		return [2]string{FloorBare, "kvserver"}
	}
	return [2]string{"base", "kvserver"}
}

// Server is side 0's (the base's) or 1's (kvserver's) binary, "" for
// the bare handler, and flags besides -pool direct.
func (o *Floor) Server(side int) (binary string, args []string) {
	switch {
	case side == 1:
		return o.Kvserver, o.Args
	case o.Base == FloorBare:
		return "", nil
	}
	return o.Base, o.BaseArgs
}

// Validate reports the first setting of o that cannot work.
func (o *Floor) Validate() error {
	switch {
	case o.ServerCPUs.IsEmpty():
		return errors.New("-server-cpus is empty")
	case o.LoaderCPUs.IsEmpty():
		return fmt.Errorf("no CPU is left for the loader beside -server-cpus %s; give -loader-cpus", o.ServerCPUs)
	case o.ServerCPUs.Overlaps(o.LoaderCPUs):
		return fmt.Errorf("-server-cpus %s and -loader-cpus %s overlap: the loader would take the servers' CPU", o.ServerCPUs, o.LoaderCPUs)
	case o.Rounds < 1:
		return fmt.Errorf("-rounds %d: give 1 or more", o.Rounds)
	case o.Round <= 0:
		return fmt.Errorf("-round %v: give a positive duration", o.Round)
	case o.Conns < 1:
		return fmt.Errorf("-conns %d: give 1 or more", o.Conns)
	case o.Rate < 0 || math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0):
		return fmt.Errorf("-rate %v: give 0 (a closed loop) or a rate both servers sustain", o.Rate)
	case o.Keys < 1:
		return fmt.Errorf("-keys %d: give 1 or more", o.Keys)
	case o.ValueSize < 1:
		return fmt.Errorf("-value-size %d: give 1 or more", o.ValueSize)
	}
	return nil
}
