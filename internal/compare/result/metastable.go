package result

import (
	"slices"
	"time"
)

// Metastable is what the metastable preset measured: one run per client
// model × variant × repeat, each with the loader's series and kvserver's
// counters over it. Its plan (models, variants, timing) is
// Plan.Metastable.
type Metastable struct {
	Workload string
	// BaseRate is the base rate (plan.MetaShare of direct's validated
	// saturation) in front of the plan's store (plan.Metastable.Slots),
	// SpikeRate the spike's: those of the runs at that size, and what
	// the loader's calibration was sized by.
	BaseRate, SpikeRate float64
	// ClientSide is what the loader was measured to hold before the
	// runs (nil: not measured).
	ClientSide *ClientSide `json:",omitempty"`
	// Sizes are the stores the runs ran in front of, the plan's first:
	// one unless the preset sized each client population's storm to the
	// loader (plan.Metastable.SizeStorms).
	Sizes []MetaSize
	Runs  []*MetaRun
}

// MetaSize is one store stand-in the runs ran in front of, and the
// rates they asked of it.
type MetaSize struct {
	// Slots is the stand-in's operations at once (-io-concurrency, and
	// the lab's pools' -workers); 0 on the fast store, which has none.
	Slots int
	// Models are the client models whose runs ran in front of it.
	Models []string
	// Saturation is direct's validated saturation in front of it;
	// BaseRate and SpikeRate the runs' rates, shares of it.
	Saturation, BaseRate, SpikeRate float64
	// Search is direct's saturation search in front of it where that is
	// not the workload's own (nil: the workload's, at the plan's store).
	Search *SatRun `json:",omitempty"`
}

// Size is the store model's runs ran in front of (nil: none).
func (m *Metastable) Size(model string) *MetaSize {
	for i := range m.Sizes {
		if slices.Contains(m.Sizes[i].Models, model) {
			return &m.Sizes[i]
		}
	}
	return nil
}

// ClientSide is the loader's cost per attempt on its CPUs, measured just
// before the storms: against a kvserver that answered at once, and one
// that never answered, where every attempt timed out, closed its
// connection and the next one opened another (a storm's dearest case).
// Attempts are what each figure was measured over; Server* are
// kvserver's CPU per attempt in the same seconds (0: not read), the
// other side of a reconnect.
type ClientSide struct {
	// Rate is the attempts per second each calibration asked.
	Rate                               float64
	LoaderCPUs                         int
	Answered, TimedOut                 time.Duration
	AnsweredAttempts, TimedOutAttempts int64
	ServerAnswered, ServerTimedOut     time.Duration `json:",omitempty"`
	// MostAttempts is, per client model, the most attempts it sends per
	// first try (client.Model.MostAttempts): the spike's rate times it is
	// the storm's worst second.
	MostAttempts map[string]float64
}

// MetaRun is one open-model run with a spike.
type MetaRun struct {
	Model   string
	Variant string // plan.MetaVariant.Name
	Repeat  int
	// Slots is the store stand-in's slots it ran in front of (see
	// MetaSize; 0 on the fast store).
	Slots int `json:",omitempty"`
	// Dir is the run's folder, relative to the report.
	Dir string
	// Series is the loader's, one point per interval.
	Series []MetaPoint
	// Totals are the series' sums; Sent is every attempt sent.
	Totals MetaTotals
	// Server is kvserver's counters over the run (nil: not read).
	Server *ServerCounts `json:",omitempty"`
	// ConnsPeak is the most connections the loader had open;
	// LoaderKeptUp whether it sent what the schedule asked.
	ConnsPeak    int
	LoaderKeptUp bool
	// LoaderCPUs is how many CPUs the loader ran on (its series' CPU
	// shares are of these); 0: not recorded.
	LoaderCPUs int `json:",omitempty"`
}

// MetaPoint is one interval of a run, as the loader counted it
// (record.Interval): attempts sent as first tries and as retries,
// attempts the client's throttle refused, and of the attempts that ended
// in it, the useful answers, timeouts, 503s and requests given up for
// good; UsefulP99 is the useful answers' p99 from their send.
type MetaPoint struct {
	T, Length                      float64 // seconds since the start, and the interval's
	FirstTries, Retries, Throttled int64
	Useful, Timeouts, Shed, GaveUp int64
	UsefulP99                      time.Duration
	// The client side's own state in the interval: attempts that waited
	// for a free connection (every one of -max-conns busy on the
	// server), the p99 send lag of the attempts that found one free (the
	// loader's own lateness), connections dialled again, and the
	// loader's CPU as a share of its CPUs (negative: unknown).
	ConnWaits, Reconnects int64         `json:",omitempty"`
	OwnLagP99             time.Duration `json:",omitempty"`
	LoaderShare           float64       `json:",omitempty"`
}

// MetaTotals are a run's counts; UsefulP99 is the useful answers' p99
// from their send over the whole run (0: not recorded).
type MetaTotals struct {
	FirstTries, Retries, Throttled int64
	Useful, Timeouts, Shed, GaveUp int64
	UsefulP99                      time.Duration `json:",omitempty"`
}

// ServerCounts are kvserver's counters over one run (the difference of
// two /metrics scrapes around it).
type ServerCounts struct {
	// Ran is the requests it answered from the store (2xx and 404).
	Ran int64
	// DeadlineRequests carried a deadline; DeadlineDropped were answered
	// 503 unrun because it had passed (by the pool, or while waiting for
	// the store); Wasted ran and finished after it: work for a client
	// that had gone. kvserver knows of waste only where the clients send
	// their deadline.
	DeadlineRequests, DeadlineDropped, Wasted int64
	// Shed is its 503s by reason (the pool's reasons, and "deadline
	// (store)" for the store's drops).
	Shed map[string]int64 `json:",omitempty"`
}

// IssuedOnSchedule is what a run under a client model issued of the
// planned first tries of its schedule: those sent, and those the
// client's own throttle refused, which were issued on schedule all the
// same; capped at planned, since the throttle's count holds the retries
// it refused too (rare: it refuses most while few answers come back,
// when retries have little to retry). unsent is the rest (0 where
// planned is unknown, 0).
func IssuedOnSchedule(firstTries, throttled, planned int64) (issued, unsent int64) {
	issued = firstTries + throttled
	if planned > 0 {
		issued = min(issued, planned)
		unsent = planned - issued
	}
	return issued, unsent
}

// MetaStepPrefix begins the step name of a metastable run's loader
// check; the client model's name follows.
const MetaStepPrefix = "metastable "
