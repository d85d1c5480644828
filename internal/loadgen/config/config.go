// Package config is every setting of a load run (Config), filled from
// flags by cmd/loadtest, and their validation: the target, the engine and
// what it can carry, the schedule's rates, the loader's loops, CPUs and
// shard.
package config

import (
	"fmt"
	"time"

	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/loadgen/client"
	"github.com/kvpool/kvpool/internal/loadgen/schedule"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
)

// Engines (-engine).
const (
	EngineFast   = "fast"
	EngineVegeta = "vegeta"
)

// Transports of the fast engine (-transport): raw connections with a
// prebuilt request each, or fasthttp.HostClient, which manages the
// connections itself (kept to compare against).
const (
	TransportRaw        = "raw"
	TransportHostClient = "hostclient"
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

	Workload workload.Workload

	Conns int // connections opened before the start
	// MaxConns caps the connections the fast engine opens when every
	// connection is busy and requests fall behind schedule (open model).
	// MaxConns == Conns disables growth.
	MaxConns int

	// Rate is the constant request rate per second (open model). 0 means
	// closed loop: every connection sends its next request as soon as the
	// previous one is answered, as wrk does.
	Rate float64
	// Duration bounds the run: with Rate > 0 exactly Rate×Duration requests
	// are scheduled (with a Spike, the spike's stretch at its own rate);
	// with Rate == 0 sending stops at Duration. 0 = no bound (then
	// Requests must be set).
	Duration time.Duration
	Requests uint64 // bounds a closed-loop run by count (0 = no bound)
	// Timeout is the most a request may take before it counts as an error
	// and its connection is replaced. It also bounds how long a run waits
	// past Duration for late requests to be sent.
	Timeout time.Duration
	// Retries is how often a failed request is retried before it counts
	// as failed. With Retries > 0 a request that still fails also ends its
	// connection's worker and becomes a candidate for Result.Resume: the
	// semantics of a resumable bulk load.
	Retries int

	// Client is how the run's clients behave (open model, fast engine):
	// their own timeout, retries, backoff, retry budget, throttle and
	// deadline header. The zero Model sends each request once and waits
	// up to Timeout for it.
	Client client.Model
	Spike  schedule.Spike // the zero Spike keeps Rate throughout

	Progress time.Duration // the interval of progress lines (0 = none)
	Seed     uint64        // makes key choices reproducible
	// Out is the directory the run streams its files into as it goes: the
	// interval logs and, with KeepResults, results.bin. "" = none.
	Out         string
	KeepResults bool
	// VegetaLatency is what results.bin's timestamps and latencies mean:
	// LatencyUncorrected (vegeta's own: the actual send, latency from it)
	// or LatencyCorrected (the intended send, the corrected latency).
	VegetaLatency string
	// Interval is the length of each histogram of the interval logs and of
	// each point of Result.Intervals.
	Interval time.Duration
	Name     string // labels the run in results.bin (vegeta's "attack" field)

	// Quantum is how often at most the fast engine's pacer wakes up: one
	// wake-up sends every request that fell due within a quantum, so a
	// send is up to a quantum late (the send lag shows it) and never
	// early. Longer batches more sends per wake-up, at less loader CPU.
	// 0 (the default): each event loop sizes it to its rate and to the
	// server's answers as the run goes (see schedule.QuantumFor).
	Quantum time.Duration
	// GrowAfter is how late the oldest due request must be, with every
	// connection busy, before the fast engine opens another connection;
	// 0 opens one as each request falls due with none idle.
	GrowAfter time.Duration

	// Loops is how many event loops send the run, as wrk's threads, each
	// with its share of the connections and of the schedule (see
	// loopGroup). 0 = the fewest the run needs (see loopsFor); for a
	// closed loop or a saturation search (Search) one per CPU the loader
	// may run on (CPUs, else this process's affinity). Never more than
	// those CPUs, nor than Conns. The vegeta engine is always one.
	Loops int
	// CPUs, if not empty, is where the loader runs: the process is pinned
	// to the set for the run, loop l's thread to its l-th CPU (wrapping),
	// and GOMAXPROCS sized to it. A loader that cannot pin itself runs
	// unpinned and its Result says why.
	CPUs cpuset.Set
	// Search marks a step of a saturation search: -loops 0 then takes
	// every CPU of the set, so that the loader is not what stops it.
	Search bool
	// Shard makes this loader one of Shard.N sending one schedule
	// together (see Shard); the zero Shard sends all of it. Rate stays
	// the whole schedule's rate.
	Shard schedule.Shard
	// StartAt, if set, is the wall-clock instant the schedule starts: the
	// run connects, waits for it and sends request seq at StartAt +
	// seq/Rate (those due before it actually started are sent at once,
	// late, and the send lag shows it). The shards of one schedule agree
	// on it.
	StartAt time.Time

	// KeepRecords keeps every record in Result.Records as well (tests of
	// the engine read them; unbounded, so never for real runs).
	KeepRecords bool
	// NoEventLoop runs the open model on the portable engine (a goroutine
	// per connection) even where the event loop exists (tests of both).
	NoEventLoop bool
	// OnLoop, if not nil, is called by each loop on its own thread (after
	// pinning it) before it starts (tests).
	OnLoop func(loop int)
}

// What results.bin's latencies mean (Config.VegetaLatency).
const (
	LatencyUncorrected = "uncorrected"
	LatencyCorrected   = "corrected"
)

// Default returns the defaults cmd/loadtest documents.
func Default() Config {
	return Config{
		Target:    "http://127.0.0.1:19234",
		Engine:    EngineFast,
		Transport: TransportRaw,
		Workload: workload.Workload{
			Mix:       workload.Get,
			Keys:      2_000_000,
			Dist:      workload.DistUniform,
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
		GrowAfter:     10 * time.Millisecond,
	}
}

// Validate reports the first setting that cannot work, saying which flag
// to change.
func (c *Config) Validate() error {
	if _, err := ParseTarget(c.Target, c.AllowRemote); err != nil {
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
	case c.Quantum < 0 || c.Quantum > schedule.MaxQuantum:
		return fmt.Errorf("-quantum %v is outside [0, %v] (0: sized to the rate and the server's answers)", c.Quantum, schedule.MaxQuantum)
	case c.Retries > 0 && c.Rate > 0:
		return fmt.Errorf("retries apply to closed-loop runs (-rate 0) only, as fill uses them")
	}
	if err := c.validateClient(); err != nil {
		return err
	}
	if err := validateSpike(c.Spike, c.Rate, c.Duration, c.Engine); err != nil {
		return err
	}
	return c.validateLoader(time.Now())
}

// validateClient checks the client model and that the run can carry it:
// only the fast engine's event loop keeps retries and per-attempt
// timeouts, and only on an open schedule.
func (c *Config) validateClient() error {
	if c.Client.IsZero() {
		return nil
	}
	if err := c.Client.Validate(); err != nil {
		return err
	}
	if err := ClientFits(c.Client, c.Engine, c.Rate); err != nil {
		return err
	}
	switch {
	case c.Transport != TransportRaw:
		return fmt.Errorf("the client model (%s) needs -transport %s", c.Client, TransportRaw)
	case c.Client.Timeout > c.Timeout:
		return fmt.Errorf("-client-timeout %v is above -timeout %v; raise -timeout (it also bounds connecting and the drain)", c.Client.Timeout, c.Timeout)
	}
	return nil
}

// ClientFits says why a run of engine at rate cannot carry client model
// m (nil: it can): the models drive the fast engine's open model only.
func ClientFits(m client.Model, engine string, rate float64) error {
	switch {
	case m.IsZero():
		return nil
	case engine == EngineVegeta:
		return fmt.Errorf("the client model (%s) needs -engine %s: vegeta's attacker has no client model", m, EngineFast)
	case rate == 0:
		return fmt.Errorf("the client model (%s) needs an open-model run (-rate above 0)", m)
	}
	return nil
}

// AttemptTimeout is how long a client waits for an attempt's answer: its
// own timeout, else the run's.
func (c *Config) AttemptTimeout() time.Duration {
	if c.Client.Timeout > 0 {
		return c.Client.Timeout
	}
	return c.Timeout
}

// startAtSlack is how far in the past -start-at may be: the instant the
// shards agreed on may pass while a loader starts up, but a start long
// past would send its backlog all at once.
const startAtSlack = time.Second

// SeriesInterval is the length of the run's series' intervals: Interval,
// or a second where that is not set.
func (c *Config) SeriesInterval() time.Duration {
	if c.Interval <= 0 {
		return time.Second
	}
	return c.Interval
}

// validateLoader checks the loops, CPUs, shard and start instant at now.
func (c *Config) validateLoader(now time.Time) error {
	switch {
	case c.Loops < 0:
		return fmt.Errorf("-loops %d is negative; give a count of event loops, or 0 for the fewest the rate needs", c.Loops)
	case c.Loops > c.Conns:
		return fmt.Errorf("-loops %d is above -conns %d: each loop needs a connection of its own; lower -loops or raise -conns", c.Loops, c.Conns)
	case c.Engine == EngineVegeta && c.Loops > 1:
		return fmt.Errorf("-loops %d needs -engine %s: vegeta's attacker is one loop", c.Loops, EngineFast)
	}
	if !c.CPUs.IsEmpty() {
		if err := c.CPUs.Check(); err != nil {
			return fmt.Errorf("-cpus %s: %w", c.CPUs, err)
		}
	}
	if err := c.Shard.Validate(); err != nil {
		return err
	}
	sharded := c.Shard != schedule.Shard{}
	switch {
	case (sharded || !c.StartAt.IsZero()) && c.Engine == EngineVegeta:
		return fmt.Errorf("-shard and -start-at need -engine %s", EngineFast)
	case !c.Shard.IsWhole() && c.StartAt.IsZero():
		return fmt.Errorf("-shard %s needs -start-at: the %d shards of one schedule must agree on the instant it starts (e.g. -start-at %s)",
			c.Shard, c.Shard.N, now.Add(time.Minute).UTC().Truncate(time.Second).Format(time.RFC3339))
	case !c.StartAt.IsZero() && c.Rate == 0 && !sharded:
		return fmt.Errorf("-start-at on a closed loop (-rate 0) needs -shard K/N: a closed loop has no schedule to start at an instant")
	case !c.StartAt.IsZero() && now.Sub(c.StartAt) > startAtSlack:
		return fmt.Errorf("-start-at %s is %v in the past; give an instant ahead (RFC 3339 such as %s, or Unix seconds)",
			c.StartAt.Format(time.RFC3339Nano), now.Sub(c.StartAt).Round(time.Millisecond), now.Add(time.Minute).UTC().Truncate(time.Second).Format(time.RFC3339))
	}
	return nil
}
