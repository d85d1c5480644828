package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/flagenv"
	"github.com/kvpool/kvpool/internal/limit"
	"github.com/kvpool/kvpool/internal/pool"
	"github.com/kvpool/kvpool/internal/server"
	"github.com/kvpool/kvpool/internal/store"
)

// envPrefix: each flag -some-name falls back to $KVPOOL_SOME_NAME
// (flagenv: a flag given wins, an empty variable is unset).
const envPrefix = "KVPOOL_"

func envName(flagName string) string { return flagenv.Name(envPrefix, flagName) }

// parseConfig fills a server.Config from args, then, for every flag not
// given on the command line, from its KVPOOL_* variable, and resolves it:
// what it returns is what kvserver logs and runs. Env values go through
// the same parser as flags, so both fail the same way. Every bad value,
// unparsable or out of range, comes back as a *server.ConfigError naming
// the flag (and the variable, if it came from one), the value and what is
// accepted. -h prints the flags to stderr and returns flag.ErrHelp.
func parseConfig(args []string, getenv func(string) string) (server.Resolved, error) {
	c := server.DefaultConfig()
	fs := flag.NewFlagSet("kvserver", flag.ContinueOnError)
	// Errors are returned, not printed with the whole usage after them;
	// -h prints the usage itself (below).
	fs.SetOutput(io.Discard)
	defineFlags(fs, &c)

	// Every value learns its flag's name, so a bad one's error can say it.
	var bad *server.ConfigError
	fs.VisitAll(func(f *flag.Flag) { f.Value = &namedValue{Value: f.Value, name: f.Name, bad: &bad} })

	if err := fs.Parse(args); err != nil {
		switch {
		case errors.Is(err, flag.ErrHelp):
			printUsage(fs, usageOutput)
			return server.Resolved{}, err
		case bad != nil:
			return server.Resolved{}, bad
		}
		return server.Resolved{}, fmt.Errorf("%w (kvserver -h lists the flags)", err)
	}
	if fs.NArg() > 0 {
		return server.Resolved{}, fmt.Errorf("unexpected arguments %q: kvserver takes only flags (kvserver -h lists them)", fs.Args())
	}
	fromEnv, err := flagenv.Apply(fs, envPrefix, getenv) // flag name -> variable
	if err != nil {
		if bad == nil { // every value is a namedValue: not expected
			return server.Resolved{}, err
		}
		bad.Env = envName(bad.Flag)
		return server.Resolved{}, bad
	}
	r, err := c.Resolve()
	if errors.As(err, &bad) {
		bad.Env = fromEnv[bad.Flag]
	}
	return r, err
}

// defineFlags defines kvserver's flags on fs, each over its field of c,
// with c's values as defaults. Usage strings give each flag's range; a
// back-quoted word names its value in -h.
func defineFlags(fs *flag.FlagSet, c *server.Config) {
	p := &c.Pcfg
	fs.StringVar(&c.Addr, "addr", c.Addr, "listen `address` (host:port; port 0: any free port)")
	fs.StringVar(&c.DataDir, "data", c.DataDir, "Pebble data `directory` (created if missing)")
	fs.StringVar(&c.Pool, "pool", c.Pool, "worker `pool`: "+strings.Join(pool.Variants, "|"))
	fs.Var(choice(&p.Exec, pool.ParseExec, pool.Exec.String), "exec",
		"where an admitted job runs, `mode`: handler (in its HTTP handler, once one of -workers slots is free)|worker (handed to one of -workers goroutines)")
	intVar(fs, &p.Workers, "workers", "pool workers (-exec worker) or slots (-exec handler), `n` >= 0 (0: GOMAXPROCS; failsafe, failsafe-priority: where the library's limit starts, 0: its own 20)")
	fs.Var(choice(&p.Capacity, parseCap, capString), "cap",
		"queue bound, `n` >= -1 or auto (auto: -max-conns, one per connection; 0: no queue, fifo only; -1: unbounded, not fifo)")
	fs.Var(choice(&p.Overflow, pool.ParseOverflow, pool.Overflow.String), "overflow", "full-queue `policy`: reject|drop-oldest|caller-runs|block")
	fs.Var(choice(&p.QueueTimeout, parseQueueTimeout, queueTimeoutString), "queue-timeout",
		"answer 503 for a job that waited longer than this `duration` (0: no limit; auto: "+server.DefaultQueueTimeout.String()+", none for adaptive, which CoDel sheds, for auto, bounded by -max-wait, and for failsafe, failsafe-priority, the library's queue)")
	fs.Var(choice(&p.MaxWait, parseMaxWait, maxWaitString), "max-wait",
		"refuse at once (503) a request that would expect to wait longer than this `duration` for a slot, a retry longer than half of it with a probability rising to 1 at it "+
			"(-exec handler; auto: derived from the store's measured service time for -pool auto, none for the others; 0: no bound, but -pool auto always bounds)")
	fs.Var(choice(&p.Limit.Algorithm, parseLimit, limitString), "limit",
		"-exec handler: how many jobs run at once, `algorithm`: "+strings.Join(limit.Algorithms, "|")+" (fixed: -workers; the others adapt to latency)")
	intVar(fs, &p.Limit.Min, "limit-min", "adaptive -limit: the lowest it goes, `n` >= 0 (0: -workers)")
	intVar(fs, &p.Limit.Max, "limit-max", "adaptive -limit: the highest it goes, `n` >= 0 (0: "+strconv.Itoa(limit.DefaultMax)+")")
	intVar(fs, &p.Limit.Initial, "limit-initial", "adaptive -limit: where it starts, `n` >= 0 (0: 4 per worker, within the bounds)")
	fs.Var(choice(&p.Limit.Smoothing, parseSmoothing, floatString), "limit-smoothing",
		"gradient2, vegas: the `share` of each window's estimate the limit takes, in (0, 1] (0: unset, 0.2 for gradient2, 1 for vegas)")
	fs.Var(choice(&p.Limit.Backoff, parseBackoff, floatString), "limit-backoff",
		"aimd: the `factor` the limit is multiplied by when latency passes its timeout, in [0.5, 1) (0: unset, "+floatString(limit.DefaultBackoff)+")")
	intVar(fs, &p.ShardsPerWorker, "shards-per-worker", "multiqueue shards per worker, `n` in 1..64")
	durationVar(fs, &p.CoDelTarget, "codel-target", "adaptive: acceptable standing queue `delay`, > 0 and < -codel-interval")
	durationVar(fs, &p.CoDelInterval, "codel-interval", "adaptive: CoDel `interval`, > 0 and <= 1m")
	boolVar(fs, &c.Sync, "sync", "fsync the WAL before acknowledging each write")
	intVar(fs, &c.CacheMiB, "cache-mb", "Pebble block cache, `MiB` >= 1")
	intVar(fs, &c.RowCacheMiB, "row-cache-mb",
		"row cache of recently read values in front of Pebble, `MiB` >= 0 (0: off; a write drops its key before it is acknowledged)")
	fs.Var(choice(&c.Compression, store.ParseCompression, compressionString), "compression",
		"Pebble block `compression`: none|snappy|minlz|zstd (random values do not compress; none skips the attempt)")
	intVar(fs, &c.MemTableMiB, "memtable-mb", "Pebble memtable size, `MiB` in 1..4095 (up to -memtable-stop-writes times this in memory while flushes run behind)")
	intVar(fs, &c.MemTableStopWrites, "memtable-stop-writes",
		"Pebble: memtables, the one being written included, that may wait for their flushes before writes stall, `n` in 2..64")
	intVar(fs, &c.L0CompactionThreshold, "l0-compaction-threshold", "Pebble: L0 sub-levels that start an L0 compaction, `n` in 1..1000")
	intVar(fs, &c.L0StopWritesThreshold, "l0-stop-writes-threshold", "Pebble: L0 sub-levels that stall writes, `n` from -l0-compaction-threshold to 1000")
	boolVar(fs, &c.CompactOnOpen, "compact-at-start", "Pebble: flush and compact the whole store before serving (benchmarks: reads from sstables, not the memtable)")
	intVar(fs, &c.ValueSeparationMinBytes, "value-separation-min", "Pebble: values of at least this many `bytes` go to blob files at flush (0: off)")
	durationVar(fs, &c.IODelay, "io-delay", "every store operation first sleeps this `duration` (0: off; the runtime's timers make sleeps under about 1ms last about 1ms)")
	fs.Var(choice(&c.IODelayDist, store.ParseDelayDist, delayDistString), "io-delay-dist", "-io-delay `distribution`: fixed|exp (exp: exponential with mean -io-delay)")
	intVar(fs, &c.IOConcurrency, "io-concurrency",
		"at most `n` store operations in progress at once, the rest waiting in arrival order, each until its request's deadline (a database's connection pool of n; "+
			"with -io-delay 1ms, 16 serves at most 16000 operations/s); n >= 0 (0: unbounded)")
	durationVar(fs, &c.DropClosedAfter, "drop-closed-after",
		"a job that waited at least this `duration` for a slot is dropped, unrun (503 abandoned), if its client has closed the connection meanwhile "+
			"(a system call per such job; Linux only; 0: never look)")
	intVar(fs, &c.MaxBodyBytes, "max-body", "largest request body, `bytes` >= 1 (413 above)")
	intVar(fs, &c.MaxKeyBytes, "max-key", "longest id, `bytes` >= 1 (400 above)")
	intVar(fs, &c.MaxHeaderBytes, "max-header", "largest request line plus headers, `bytes` (431 above; must fit an id of -max-key bytes percent-encoded)")
	durationVar(fs, &c.ReadTimeout, "read-timeout", "time to read one request, a `duration` (0: none)")
	durationVar(fs, &c.WriteTimeout, "write-timeout", "time to write one response, a `duration` (0: none)")
	durationVar(fs, &c.IdleTimeout, "idle-timeout", "keep-alive connection idle limit, a `duration` (0: none)")
	intVar(fs, &c.MaxConns, "max-conns", "connections served at once, `n` >= 1 (one more is answered 503 and closed)")
	intVar(fs, &c.MaxConnsPerIP, "max-conns-per-ip", "connections from one client IP, `n` >= 0 (429 above; 0: no limit)")
	durationVar(fs, &c.ShutdownTimeout, "shutdown-timeout", "graceful stop: wait this `duration` (> 0) for requests in flight")
	intVar(fs, &c.MutexProfileFraction, "mutex-profile-fraction", "report 1/`n` mutex contention events to pprof (0: off)")
	intVar(fs, &c.BlockProfileRate, "block-profile-rate", "sample blocking events of `ns` nanoseconds (0: off)")
	boolVar(fs, &c.PprofRemote, "pprof-remote", "serve /debug/pprof to non-loopback clients too (profiles show memory and the command line)")
	fs.Var(choice(&c.LogLevel, parseLevel, levelString), "log-level", "`level`: debug|info|warn|error")
}

// usageOutput is where -h prints; tests catch it.
var usageOutput io.Writer = os.Stderr

func printUsage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprintf(w, "Usage: kvserver [flags]\nEvery flag -name falls back to $%sNAME (dashes as underscores).\n"+
		"A bad value exits with status 2; a failed start with 1.\n\n", envPrefix)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// namedValue wraps a flag's Value so that a value it refuses becomes a
// *server.ConfigError naming the flag; the first one is kept in *bad.
type namedValue struct {
	flag.Value
	name string
	bad  **server.ConfigError
}

func (v *namedValue) Set(s string) error {
	err := v.Value.Set(s)
	if err != nil && *v.bad == nil {
		*v.bad = &server.ConfigError{Flag: v.name, Value: s, Want: err.Error()}
	}
	return err
}

// String is also called on a zero namedValue, by PrintDefaults.
func (v *namedValue) String() string {
	if v == nil || v.Value == nil {
		return ""
	}
	return v.Value.String()
}

// IsBoolFlag keeps -sync meaning -sync=true through the wrapper.
func (v *namedValue) IsBoolFlag() bool {
	b, ok := v.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// value is a flag.Value over *p, parsed by parse (whose error says what is
// accepted) and printed by format.
type value[T any] struct {
	p      *T
	parse  func(string) (T, error)
	format func(T) string
}

func choice[T any](p *T, parse func(string) (T, error), format func(T) string) *value[T] {
	return &value[T]{p: p, parse: parse, format: format}
}

func (v *value[T]) Set(s string) error {
	x, err := v.parse(s)
	if err == nil {
		*v.p = x
	}
	return err
}

func (v *value[T]) String() string {
	if v == nil || v.p == nil {
		return ""
	}
	return v.format(*v.p)
}

// boolValue is value[bool] that the flag package lets stand alone (-sync).
type boolValue struct{ *value[bool] }

func (boolValue) IsBoolFlag() bool { return true }

func intVar(fs *flag.FlagSet, p *int, name, usage string) {
	fs.Var(choice(p, parseInt, strconv.Itoa), name, usage)
}

func durationVar(fs *flag.FlagSet, p *time.Duration, name, usage string) {
	fs.Var(choice(p, parseDuration, time.Duration.String), name, usage)
}

func boolVar(fs *flag.FlagSet, p *bool, name, usage string) {
	fs.Var(boolValue{choice(p, parseBool, strconv.FormatBool)}, name, usage)
}

func parseCap(s string) (int, error) {
	if s == "auto" {
		return server.AutoCapacity, nil
	}
	n, err := strconv.ParseInt(s, 0, strconv.IntSize)
	if err != nil || n < int64(pool.Unbounded) {
		return 0, errors.New("must be auto (-max-conns), -1 (unbounded), 0 (no queue) or more")
	}
	return int(n), nil
}

func capString(n int) string {
	if n == server.AutoCapacity {
		return "auto"
	}
	return strconv.Itoa(n)
}

func parseQueueTimeout(s string) (time.Duration, error) {
	if s == "auto" {
		return server.AutoQueueTimeout, nil
	}
	d, err := parseDuration(s)
	if err == nil && d < 0 {
		return 0, errors.New("must be auto, 0 (no limit) or more")
	}
	return d, err
}

func queueTimeoutString(d time.Duration) string {
	if d == server.AutoQueueTimeout {
		return "auto"
	}
	return d.String()
}

func parseMaxWait(s string) (time.Duration, error) {
	if s == "auto" {
		return server.AutoMaxWait, nil
	}
	d, err := parseDuration(s)
	if err == nil && d < 0 {
		return 0, errors.New("must be auto, 0 (no bound) or more")
	}
	return d, err
}

func maxWaitString(d time.Duration) string { return server.MaxWaitText(d) }

func parseLimit(s string) (string, error) {
	if !slices.Contains(limit.Algorithms, s) {
		return "", fmt.Errorf("must be one of %s", strings.Join(limit.Algorithms, ", "))
	}
	return s, nil
}

func limitString(s string) string {
	if s == "" {
		return "fixed"
	}
	return s
}

// parseSmoothing refuses 0 given explicitly: the field's zero value means
// "the algorithm's default", which only leaving the flag out asks for.
func parseSmoothing(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f > 0 && f <= 1) {
		return 0, errors.New("must lie in (0, 1]")
	}
	return f, nil
}

func parseBackoff(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f >= 0.5 && f < 1) {
		return 0, errors.New("must lie in [0.5, 1)")
	}
	return f, nil
}

func floatString(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func parseInt(s string) (int, error) {
	n, err := strconv.ParseInt(s, 0, strconv.IntSize)
	if err != nil {
		return 0, errors.New("must be a whole number")
	}
	return int(n), nil
}

func parseBool(s string) (bool, error) {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, errors.New("must be true or false")
	}
	return b, nil
}

// parseDuration is time.ParseDuration with errors that say what to write:
// a bare number ("5") is the usual mistake.
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	switch {
	case err == nil:
		return d, nil
	case isNumber(s):
		return 0, fmt.Errorf("a duration needs a unit: write e.g. %sms or %ss", s, s)
	}
	return 0, errors.New("must be a duration such as 250ms, 1s or 1m30s")
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return l, errors.New("must be debug, info, warn or error")
	}
	return l, nil
}

func levelString(l slog.Level) string { return strings.ToLower(l.String()) }

func compressionString(c store.Compression) string { return string(c) }

func delayDistString(d store.DelayDist) string { return string(d) }
