// Package config is every setting of a load run (Config), filled from
// flags by cmd/loadtest, and their validation: the target, the engine and
// what it can carry, the schedule's rates, the loader's loops, CPUs and
// shard.
package config

import (
	"flag"
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

// The Add* methods define flags of c's fields on fs, c's values their
// defaults, one group each: a subcommand adds only the groups it takes,
// so that a flag it does not take is refused by the flag package.

// AddTarget: where the load goes.
func (c *Config) AddTarget(fs *flag.FlagSet) {
	fs.StringVar(&c.Target, "target", c.Target, "server base URL (loopback only unless -allow-remote)")
	fs.BoolVar(&c.AllowRemote, "allow-remote", false, "permit a -target that is not a loopback address")
}

// AddKeys: the ids and values every workload uses.
func (c *Config) AddKeys(fs *flag.FlagSet) {
	fs.Uint64Var(&c.Workload.Keys, "keys", c.Workload.Keys, "requests use ids 1..keys")
	fs.IntVar(&c.Workload.ValueSize, "value-size", c.Workload.ValueSize, "PUT body size in bytes")
}

// AddKeyChoice: the keys and how they are chosen, beside the workload's
// mix of requests (which the caller reads into Workload.Mix).
func (c *Config) AddKeyChoice(fs *flag.FlagSet) {
	c.AddKeys(fs)
	fs.StringVar(&c.Workload.Dist, "dist", c.Workload.Dist, "key distribution: uniform | zipf (id 1 hottest)")
	fs.Float64Var(&c.Workload.ZipfS, "zipf-s", c.Workload.ZipfS, "Zipf exponent s > 1 for -dist zipf")
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "seed of the key choice")
}

// AddEngine: how the load is sent, and by which loops (the open model's
// engines; the clients are client.Flags').
func (c *Config) AddEngine(fs *flag.FlagSet) {
	fs.IntVar(&c.Conns, "conns", c.Conns, "connections opened at the start")
	fs.IntVar(&c.MaxConns, "max-conns", c.MaxConns, "cap on connections opened when all are busy (open model)")
	fs.StringVar(&c.Engine, "engine", c.Engine, "fast (own pacer over fasthttp-parsed raw connections) | vegeta (vegeta's attacker)")
	fs.StringVar(&c.Transport, "transport", c.Transport, "fast engine connections: raw | hostclient (fasthttp.HostClient)")
	fs.DurationVar(&c.Quantum, "quantum", c.Quantum, "fast engine: one wake-up sends every request due within this (at most 1ms); 0 = sized by each loop to its rate and the server's median answer: a wake-up per request below 8,000 req/s a loop, else 250µs or more; the send lag shows it")
	fs.DurationVar(&c.GrowAfter, "grow-after", c.GrowAfter, "open another connection when a due request waited this long with all busy")
	c.AddLoader(fs)
}

// AddLoader: how many loops the loader runs and on which CPUs.
func (c *Config) AddLoader(fs *flag.FlagSet) {
	fs.IntVar(&c.Loops, "loops", c.Loops, "`N` event loops, each on a thread of its own with its share of -conns and of the schedule (wrk's -t); "+
		"0 = the fewest the rate needs: one up to what one loop sends with headroom, more above; a closed loop (-rate 0) or saturate: one per CPU of -cpus, else of the CPUs this process may run on; never more than those CPUs or -conns; -engine vegeta: 1")
	fs.Var(parsedFlag[cpuset.Set]{&c.CPUs, cpuset.Parse, cpuset.Set.String}, "cpus", "pin the loader to these CPUs, a `LIST` in Linux cpu-list syntax (0-3 or 0,2,4-5): loop i to the i-th, GOMAXPROCS sized to them; "+
		"where pinning fails the run goes on unpinned and says why (default: unpinned)")
}

// AddRun: per-request timeout and the progress lines while the run goes.
func (c *Config) AddRun(fs *flag.FlagSet) {
	fs.DurationVar(&c.Timeout, "timeout", c.Timeout, "per-request timeout; also the most a run waits past its schedule for late sends")
	fs.DurationVar(&c.Progress, "progress", c.Progress, "interval of progress lines on stderr (0 = none)")
}

// AddOutput: what a run streams into its folder.
func (c *Config) AddOutput(fs *flag.FlagSet) {
	fs.DurationVar(&c.Interval, "interval", c.Interval, "length of each histogram of the .hlog files and point of summary.json's series")
	fs.StringVar(&c.VegetaLatency, "vegeta-latency", c.VegetaLatency, "results.bin: uncorrected (actual send time, latency from it: vegeta's meaning) | corrected (intended send time, corrected latency)")
	fs.BoolVar(&c.KeepResults, "results", c.KeepResults, "write results.bin (every request, vegeta's format)")
}

// AddShard: this loader's part of one schedule that several loader hosts
// send together, from an instant they agree on.
func (c *Config) AddShard(fs *flag.FlagSet) {
	fs.Var(parsedFlag[schedule.Shard]{&c.Shard, schedule.ParseShard, schedule.Shard.String}, "shard", "send shard `K/N` of one schedule, counted from 1 (1/3, 2/3, 3/3): of the requests one loader at the whole -rate would send, "+
		"every N-th from the K-th, each at its time in that schedule; -rate stays the whole rate; needs -start-at; loadtest merge of the N runs is the whole")
	fs.Var(parsedFlag[time.Time]{&c.StartAt, schedule.ParseStartAt, schedule.StartAtText}, "start-at", "start the schedule at the instant `TIME`, after connecting: RFC 3339 (2026-11-24T12:00:00Z, "+
		"fractional seconds allowed) or Unix seconds (1795003200, 1795003200.25); the shards of one schedule give the same")
}

// parsedFlag is a flag that parse reads into *p and format prints.
type parsedFlag[T any] struct {
	p      *T
	parse  func(string) (T, error)
	format func(T) string
}

func (f parsedFlag[T]) String() string {
	if f.p == nil {
		return ""
	}
	return f.format(*f.p)
}

func (f parsedFlag[T]) Set(s string) error {
	v, err := f.parse(s)
	if err != nil {
		return err
	}
	*f.p = v
	return nil
}
