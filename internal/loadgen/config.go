// Package loadgen is the load lab's core: run a schedule of requests over
// connections against the kvserver's /v0/entity API (open-model constant
// rate, or closed loop as fast as the connections go) and record every
// outcome exactly, twice (latency from the actual send and from the
// scheduled send, the coordinated-omission correction), streaming the
// interval logs and results.bin to disk as the run goes.
//
// What is built on a run lives in subpackages, as vegeta's lib is cut:
// workload (which requests), report (printing and summary.json), fill,
// saturate, merge. The "vegeta" engine (vegeta's attacker over net/http,
// an independent cross-check of the "fast" one) shares Config and Result.
package loadgen

import (
	"fmt"
	"time"

	"github.com/kvpool/kvpool/internal/loadgen/workload"
)

// Engines (-engine).
const (
	EngineFast   = "fast"
	EngineVegeta = "vegeta"
)

// Transports of the fast engine (-transport).
const (
	// TransportRaw: one goroutine per TCP connection writing a prebuilt
	// request and parsing the response with fasthttp.Response. Cheapest.
	TransportRaw = "raw"
	// TransportHostClient: the same workers calling fasthttp.HostClient.Do,
	// which manages the connections itself. Kept to compare against.
	TransportHostClient = "hostclient"
)

// DefaultQuantum is the fast engine's default Config.Quantum, chosen by
// measuring loader CPU and send lag side by side (README, "How far to
// trust the loader"); MaxQuantum is the most it may be, a quarter of
// wrk2's 1 ms timer.
const (
	DefaultQuantum = 250 * time.Microsecond
	MaxQuantum     = 250 * time.Microsecond
)

// Config is every setting of a run, filled from flags by cmd/loadtest.
// Zero durations and counts mean "not set" where the field says so.
type Config struct {
	// Target is the server's base URL; requests go to Target + "/v0/entity".
	Target string
	// AllowRemote permits a target that is not a loopback address.
	AllowRemote bool

	Engine    string // EngineFast or EngineVegeta
	Transport string // TransportRaw or TransportHostClient (fast engine only)

	Workload Workload

	// Conns is the number of connections opened before the start.
	Conns int
	// MaxConns caps the connections the fast engine opens when every
	// connection is busy and requests fall behind schedule (open model).
	// MaxConns == Conns disables growth.
	MaxConns int

	// Rate is the constant request rate per second (open model). 0 means
	// closed loop: every connection sends its next request as soon as the
	// previous one is answered, as wrk does.
	Rate float64
	// Duration bounds the run: with Rate > 0 exactly Rate×Duration requests
	// are scheduled; with Rate == 0 sending stops at Duration. 0 = no bound
	// (then Requests must be set).
	Duration time.Duration
	// Requests bounds a closed-loop run by count (0 = no bound).
	Requests uint64
	// Timeout is the most a request may take before it counts as an error
	// and its connection is replaced. It also bounds how long a run waits
	// past Duration for late requests to be sent.
	Timeout time.Duration
	// Retries is how often a failed request is retried before it counts
	// as failed. With Retries > 0 a request that still fails also ends its
	// connection's worker and becomes a candidate for Result.Resume: the
	// semantics of a resumable bulk load.
	Retries int

	// Progress is the interval of progress lines (0 = none).
	Progress time.Duration
	// Seed makes key choices reproducible.
	Seed uint64
	// Out is the directory the run streams its files into as it goes: the
	// interval logs and, with KeepResults, results.bin. "" = none.
	Out string
	// KeepResults writes every request's result to Out/results.bin.
	KeepResults bool
	// VegetaLatency is what results.bin's timestamps and latencies mean:
	// LatencyUncorrected (vegeta's own: the actual send, latency from it)
	// or LatencyCorrected (the intended send, the corrected latency).
	VegetaLatency string
	// Interval is the length of each histogram of the interval logs and of
	// each point of Result.Intervals.
	Interval time.Duration
	// Name labels the run in results.bin (vegeta's "attack" field).
	Name string

	// Quantum is how often at most the fast engine's pacer wakes up: one
	// wake-up sends every request that fell due since the last, so a send
	// is up to a quantum late (the send lag shows it) and never early.
	// Longer batches more sends per wake-up, at less loader CPU.
	Quantum time.Duration
	// GrowAfter is how late the oldest due request must be, with every
	// connection busy, before the fast engine opens another connection;
	// 0 opens one as each request falls due with none idle.
	GrowAfter time.Duration

	// keepRecords keeps every record in Result.records as well (tests of
	// the engine read them; unbounded, so never for real runs).
	keepRecords bool
	// noEventLoop runs the open model on the portable engine (a goroutine
	// per connection) even where the event loop exists (tests of both).
	noEventLoop bool
	// col is the run's collector, made with its first recorder.
	col *collector
}

// What results.bin's latencies mean (Config.VegetaLatency).
const (
	LatencyUncorrected = "uncorrected"
	LatencyCorrected   = "corrected"
)

// DefaultConfig returns the defaults cmd/loadtest documents.
func DefaultConfig() Config {
	return Config{
		Target:    "http://127.0.0.1:19234",
		Engine:    EngineFast,
		Transport: TransportRaw,
		Workload: Workload{
			Mix:       workload.Get,
			Keys:      2_000_000,
			Dist:      DistUniform,
			ZipfS:     1.1,
			ValueSize: 500,
		},
		Conns:         64,
		MaxConns:      256,
		Rate:          1000,
		Duration:      30 * time.Second,
		Timeout:       10 * time.Second,
		Progress:      time.Second,
		Seed:          1,
		KeepResults:   true,
		VegetaLatency: LatencyUncorrected,
		Interval:      time.Second,
		Quantum:       DefaultQuantum,
		GrowAfter:     10 * time.Millisecond,
	}
}

// Validate reports the first setting that cannot work, saying which flag
// to change.
func (c *Config) Validate() error {
	if _, err := parseTarget(c.Target, c.AllowRemote); err != nil {
		return err
	}
	if err := c.Workload.Validate(); err != nil {
		return err
	}
	switch {
	case c.Engine != EngineFast && c.Engine != EngineVegeta:
		return fmt.Errorf("-engine %q is not %s or %s", c.Engine, EngineFast, EngineVegeta)
	case c.Transport != TransportRaw && c.Transport != TransportHostClient:
		return fmt.Errorf("-transport %q is not %s or %s", c.Transport, TransportRaw, TransportHostClient)
	case c.Conns < 1:
		return fmt.Errorf("-conns must be at least 1")
	case c.MaxConns < c.Conns:
		return fmt.Errorf("-max-conns %d is below -conns %d", c.MaxConns, c.Conns)
	case c.Rate < 0:
		return fmt.Errorf("-rate %v is negative (0 means closed loop)", c.Rate)
	case c.Rate > 0 && c.Duration <= 0:
		return fmt.Errorf("-duration must be positive with -rate %v", c.Rate)
	case c.Rate == 0 && c.Duration <= 0 && c.Requests == 0:
		return fmt.Errorf("a closed-loop run (-rate 0) needs -duration or a request count to stop")
	case c.Timeout <= 0:
		return fmt.Errorf("-timeout must be positive")
	case c.Interval <= 0:
		return fmt.Errorf("-interval must be positive")
	case c.VegetaLatency != "" && c.VegetaLatency != LatencyUncorrected && c.VegetaLatency != LatencyCorrected:
		return fmt.Errorf("-vegeta-latency %q is not %s or %s", c.VegetaLatency, LatencyUncorrected, LatencyCorrected)
	case c.GrowAfter < 0:
		return fmt.Errorf("-grow-after %v is negative (0: open a connection as soon as a request finds every one busy)", c.GrowAfter)
	case c.Quantum <= 0 || c.Quantum > MaxQuantum:
		return fmt.Errorf("-quantum %v is outside (0, %v]", c.Quantum, MaxQuantum)
	case c.Retries > 0 && c.Rate > 0:
		return fmt.Errorf("retries apply to closed-loop runs (-rate 0) only, as fill uses them")
	}
	return nil
}
