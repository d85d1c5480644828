// Package record is what a run measured, and how: each connection's
// Recorder hands its Outcomes to the run's one Collector, which keeps the
// histograms, counters and interval series, streams the interval logs and
// results.bin to disk, and fills the Result. Engines record through it;
// it knows nothing of them.
package record

import (
	"fmt"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/latency"
	"github.com/kvpool/kvpool/internal/loadgen/config"
)

// Result is everything a run measured. Histograms hold microseconds.
type Result struct {
	Config config.Config
	Start  time.Time
	// Elapsed runs from the start to the last response.
	Elapsed time.Duration
	// SendSpan runs from the start to the last send.
	SendSpan time.Duration
	// Planned is the number of requests the schedule asked of this loader
	// (Rate × Duration, or Config.Requests; a shard's share of them); 0
	// for a closed loop bounded by time.
	Planned uint64
	// Sent counts requests sent; each was answered or failed.
	Sent int64
	// Resume is the lowest seq not known to be done (fast engine), over
	// every loop: every request below it succeeded. With Config.Retries
	// it is where an interrupted or failed fill resumes.
	Resume uint64

	Uncorrected *hdrhistogram.Histogram // from the actual send
	Corrected   *hdrhistogram.Histogram // from the scheduled send
	SendLag     *hdrhistogram.Histogram // how late each send started

	Codes      map[int]int64    // status code → count; 0 = transport error
	Errors     map[string]int64 // error message → count
	ErrorCount int64
	// Late counts sends that started more than 1 ms after schedule.
	Late int64
	// ConnWaits counts the attempts that waited for a connection
	// (FlagConnWait), sent or expired unsent; OwnLate the sends that did
	// not and still started more than 1 ms after schedule: the loader's
	// own lag. Only the fast engine's event loop tells the two apart
	// (OwnLagKnown); elsewhere both are 0, as are Interval's ConnWaits
	// and OwnLagP99Us.
	ConnWaits, OwnLate int64
	OwnLagKnown        bool

	BytesIn, BytesOut int64
	// ConnsStart and ConnsPeak are the connections (vegeta: workers) at the
	// start and at most; ConnsPeak > ConnsStart means the engine had to open
	// more because every connection was busy.
	ConnsStart, ConnsPeak int
	ConnsUsed             int // connections that carried at least one request
	// Reconnects counts connections re-dialled because the server closed
	// them (idle, Connection: close) or a request on them failed; a
	// request the server's close caught before any answer was sent again.
	Reconnects int64
	// InFlightPeak is the most requests in flight at once; with several
	// loops, the sum of the loops' peaks, an upper bound (the peaks need
	// not coincide).
	InFlightPeak int
	CPU          CPUTime // the loader process's CPU time during the run

	// Quantum is the fast engine's quantum at the end of an open-model
	// run (Config.Quantum, or what the loops sized it to; the longest of
	// the loops'); 0 for a closed loop or the vegeta engine.
	Quantum time.Duration

	// Loops is how many event loops sent the run (Config.Loops resolved),
	// LoopsWhy why ("1 loop: 5,000 req/s is within one loop's ~50,000 req/s").
	Loops    int
	LoopsWhy string
	// LoaderCPUs is how many CPUs the loader ran on, LoaderCPUSet which:
	// Config.CPUs where it pinned itself to them, else its affinity
	// (LoaderUse is its share of them).
	LoaderCPUs   int
	LoaderCPUSet cpuset.Set
	// Pinned tells whether the process ran bound to Config.CPUs (and each
	// event loop's thread to one of them); Unpinned says why not: "no
	// -cpus", or what pinning answered.
	Pinned   bool
	Unpinned string

	Clients ClientTotals // zero without a client model (Config.Client)
	// UsefulP99 is the p99 of the useful answers' latency from their
	// send over the whole run (Config.Client; 0: none).
	UsefulP99 time.Duration

	// Ops is each operation's part of the run (GET, PUT, DELETE, in that
	// order; only those it sent): in a run of several, counted apart; in
	// a run of one, that one with the run's own figures. Nil where the run
	// sent nothing.
	Ops []OpResult

	Intervals []Interval // the run cut into Config.Interval slices
	// OutputErr is the first error writing the files the run streams into
	// Config.Out (nil: they are complete).
	OutputErr error

	Records []Record // only with Config.KeepRecords, by send time
	errMsgs []string // the run's error table: errIdx-1 indexes it
}

// Unsent is how many scheduled requests were never sent (the run was
// interrupted, or requests were still queued when the drain time ran out).
func (r *Result) Unsent() int64 {
	if r.Planned == 0 || int64(r.Planned) < r.Sent {
		return 0
	}
	return int64(r.Planned) - r.Sent
}

// AchievedRate is responses per second over the whole run.
func (r *Result) AchievedRate() float64 { return PerSecond(r.Sent, r.Elapsed) }

// UsefulGoodput is the answers to a client still waiting, per second
// over the whole run (Config.Client; without a client model every
// success is one, see Result.Clients).
func (r *Result) UsefulGoodput() float64 { return PerSecond(r.Clients.Useful, r.Elapsed) }

// SendRate is sends per second, from the start to the last send.
func (r *Result) SendRate() float64 { return PerSecond(r.Sent, r.SendSpan) }

// PerSecond is n per second over d; 0 where d is not positive.
func PerSecond(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// ErrorRate is the share of sent requests that failed.
func (r *Result) ErrorRate() float64 { return ratio(r.ErrorCount, r.Sent) }

// ratio is n over of; 0 where of is 0.
func ratio(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// LoaderUse is the loader's CPU use over the run: CPU over Elapsed ×
// LoaderCPUs (unknown where either is not read).
func (r *Result) LoaderUse() cpuset.Use { return r.CPU.Use(r.Elapsed, r.LoaderCPUs) }

// CPUPerRequest is the loader's CPU time per sent request.
func (r *Result) CPUPerRequest() time.Duration {
	if r.Sent == 0 {
		return 0
	}
	return r.CPU.Total() / time.Duration(r.Sent)
}

// keptUp is the share of the asked rate a run must achieve to count as
// having been offered that rate.
const keptUp = 0.99

// Warnings lists what makes the run's numbers untrustworthy or surprising,
// loudest first. Empty means the loader kept up.
func (r *Result) Warnings() []string {
	var w []string
	asked := r.Config.AskedRate()
	if asked > 0 {
		if ach := r.AchievedRate(); ach < keptUp*asked {
			w = append(w, fmt.Sprintf("achieved %.0f req/s, %.1f%% of the asked %.0f req/s: the server or the loader could not keep up (loader CPU %.1f µs/request; sends late: %d)",
				ach, 100*ach/asked, asked, float64(r.CPUPerRequest())/float64(time.Microsecond), r.Late))
		}
		if u := r.Unsent(); u > 0 {
			w = append(w, fmt.Sprintf("%d of %d scheduled requests were never sent (interrupted, or still queued when the drain time -timeout ran out)", u, r.Planned))
		}
		if r.Late > 0 && float64(r.Late) > 0.001*float64(r.Sent) {
			whose := ""
			if r.OwnLagKnown {
				whose = fmt.Sprintf("; %d of them waited for a connection (every one busy on the server, or being dialled again), %d were the loader's own lag",
					r.Late-r.OwnLate, r.OwnLate)
			}
			w = append(w, fmt.Sprintf("%d requests (%.2f%%) were sent more than %v behind schedule (send lag p99 %s, max %s%s): corrected latencies include that wait, uncorrected ones do not",
				r.Late, 100*float64(r.Late)/float64(r.Sent), LateThreshold,
				latency.FormatMicros(r.SendLag.ValueAtPercentile(99)), latency.FormatMicros(r.SendLag.Max()), whose))
		}
	}
	if r.ConnsPeak > r.ConnsStart {
		capped := ""
		if r.ConnsPeak >= r.Config.MaxConns {
			capped = fmt.Sprintf(", reaching the cap -max-conns %d", r.Config.MaxConns)
		}
		w = append(w, fmt.Sprintf("every connection was busy: opened %d more than the %d at start%s", r.ConnsPeak-r.ConnsStart, r.ConnsStart, capped))
	}
	return w
}
