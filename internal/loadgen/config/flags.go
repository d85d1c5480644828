package config

import (
	"flag"
	"time"

	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/loadgen/schedule"
)

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
