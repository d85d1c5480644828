package server

import (
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/limit"
	"github.com/kvpool/kvpool/internal/pool"
	"github.com/kvpool/kvpool/internal/store"
)

// limitName is -limit as in effect: "fixed" for the zero value.
func limitName(l limit.Config) string {
	if l.Algorithm == "" {
		return "fixed"
	}
	return l.Algorithm
}

// Config is everything kvserver can be told. cmd/kvserver fills it from
// flags with KVPOOL_* environment fallbacks; tests fill it directly.
type Config struct {
	Addr    string // listen address; loopback by default
	DataDir string // Pebble's directory

	Pool string      // pool variant, one of pool.Variants
	Pcfg pool.Config // workers, capacity, overflow, queue timeout, exec, limit, ...
	// Pcfg.Capacity may be AutoCapacity and Pcfg.QueueTimeout
	// AutoQueueTimeout: PoolConfig resolves them.

	Sync     bool // fsync the WAL before acknowledging each write
	CacheMiB int  // Pebble block cache

	// RowCacheMiB bounds the row cache in front of Pebble (see
	// store.RowCache): recently read values, answered without Pebble's
	// point lookup. 0 is off.
	RowCacheMiB int

	// Pebble's write path (see store.Options for what each trades).
	Compression             store.Compression
	MemTableMiB             int
	MemTableStopWrites      int
	L0CompactionThreshold   int
	L0StopWritesThreshold   int
	ValueSeparationMinBytes int  // 0 = off
	CompactOnOpen           bool // flush and compact the whole store before serving

	// IODelay, when positive, makes every store operation first sleep
	// this long (IODelayDist fixed) or an exponentially distributed time
	// of this mean (exp): a stand-in for a store behind a network call.
	IODelay     time.Duration
	IODelayDist store.DelayDist
	// IOConcurrency, when positive, lets at most this many store
	// operations be in progress at once; the rest wait their turn in the
	// stand-in's FIFO, giving up at their request's deadline (see
	// store.Bounded): with IODelay, a backend of finite throughput. 0 is
	// unbounded.
	IOConcurrency int

	// DropClosedAfter, when positive, drops a job that waited at least
	// this long for a slot, unrun (503 abandoned), if its client has
	// closed the connection meanwhile (pool.Config.AbandonAfter; Linux
	// only). 0 never looks.
	DropClosedAfter time.Duration

	MaxBodyBytes   int // larger request bodies are answered 413, refused before they are read
	MaxKeyBytes    int // longer ids are answered 400
	MaxHeaderBytes int // request line and headers together; larger are answered 431

	ReadTimeout     time.Duration // reading one request, headers and body
	WriteTimeout    time.Duration // writing one response
	IdleTimeout     time.Duration // a keep-alive connection waiting for its next request
	MaxConns        int           // connections served at once; more are answered 503 and closed
	MaxConnsPerIP   int           // connections from one client IP; more are answered 429 and closed; 0 = no limit
	ShutdownTimeout time.Duration // how long a graceful stop waits for requests in flight

	MutexProfileFraction int // runtime.SetMutexProfileFraction; 0 = off
	BlockProfileRate     int // runtime.SetBlockProfileRate; 0 = off

	PprofRemote bool // serve /debug/pprof to every client, not only loopback ones

	LogLevel slog.Level // the least severe level logged
}

// DefaultConfig is what kvserver runs with when told nothing. Every default
// is spelled out (workers aside: GOMAXPROCS, known only at run time), so
// flag help and the start-up line show what runs.
func DefaultConfig() Config {
	return Config{
		Addr:    "127.0.0.1:19234",
		DataDir: "./data",
		Pool:    pool.Auto,
		Pcfg: pool.Config{
			Exec:            pool.DefaultExec,
			Capacity:        AutoCapacity,
			QueueTimeout:    AutoQueueTimeout,
			MaxWait:         AutoMaxWait,
			ShardsPerWorker: pool.DefaultShardsPerWorker,
			CoDelTarget:     pool.DefaultCoDelTarget,
			CoDelInterval:   pool.DefaultCoDelInterval,
		},
		CacheMiB:    1024,
		RowCacheMiB: DefaultRowCacheMiB,
		Compression: store.CompressionSnappy,
		MemTableMiB: store.DefaultMemTableBytes >> 20,
		// CockroachDB's choice on Pebble: two memtables beyond the one
		// that flushes and the one being written, so that a flush that
		// runs slow (it shares the CPU with compactions) costs memory, not
		// a stall of every write.
		MemTableStopWrites:    4,
		L0CompactionThreshold: 4,
		L0StopWritesThreshold: 12,
		IODelayDist:           store.DelayFixed,
		DropClosedAfter:       DefaultDropClosedAfter,
		MaxBodyBytes:          1 << 20,
		MaxKeyBytes:           1 << 10,
		MaxHeaderBytes:        8 << 10,
		ReadTimeout:           10 * time.Second,
		WriteTimeout:          10 * time.Second,
		IdleTimeout:           60 * time.Second,
		MaxConns:              10000,
		ShutdownTimeout:       10 * time.Second,
		LogLevel:              slog.LevelInfo,
	}
}

// DefaultRowCacheMiB is -row-cache-mb's default. A 500-B value is charged
// about 680 B in the row cache (key, value rounded to its allocation size,
// the entry's bookkeeping), so 128 MiB holds about 200,000 such rows: a
// hot set of that size, or all of the lab's 100,000-id fill, is answered
// without Pebble. It is an eighth of -cache-mb's default, whose blocks
// hold the same values: memory a server that sized its block cache can
// spare, and small beside the memtables (two of 64 MiB while one
// flushes).
const DefaultRowCacheMiB = 128

// AutoCapacity as Pcfg.Capacity (-cap auto, the default) bounds the queue
// at -max-conns. Each connection has at most one request in the handler
// (fasthttp reads the next only after answering), so a queue that deep can
// hold every request the server has taken and never refuses one at once
// for want of room. A 503 answered at once frees its connection for the
// client's next request, which is refused again: a short queue before
// many connections turns the CPU into refusals (docs/configuration.md,
// Why the defaults shed by age, not by count). Requests are shed by age
// instead: AutoQueueTimeout, CoDel.
const AutoCapacity = -2

// AutoQueueTimeout as Pcfg.QueueTimeout (-queue-timeout auto, the
// default) is DefaultQueueTimeout for fifo, lifo, msqueue and multiqueue,
// and none for adaptive, whose CoDel already sheds what waited past twice
// its target, for auto, whose waits are bounded in time (-max-wait), for
// the failsafe variants, whose queue is the library's, and for direct,
// which queues nothing.
const AutoQueueTimeout time.Duration = -1

// AutoMaxWait as Pcfg.MaxWait (-max-wait auto, the default) is
// pool.AutoMaxWait for the auto pool, a bound derived from the store's
// measured speed, and none for the others, the lab's subjects, which
// keep their own shedding unless given a -max-wait.
const AutoMaxWait = pool.AutoMaxWait

// DefaultQueueTimeout is what AutoQueueTimeout gives the queueing pools
// but adaptive: how long a request may wait for a slot before it is
// answered 503, chosen by measurement (docs/configuration.md, Why the
// defaults shed by age, not by count). It
// must stay above the wait the connections themselves make: C
// connections each holding a request before a server answering X per
// second wait C/X on average (Little's law: 4,096 at 50,000/s is 80 ms),
// and a timeout below that expires most requests, each 503 freeing a
// connection for the next: the refusal storm again, by age. One second is
// about what a client waits before it gives up: what waited longer is
// likely unwanted.
const DefaultQueueTimeout = time.Second

// DefaultDropClosedAfter is -drop-closed-after's default: a job that
// waited this long for a slot is worth a system call to learn whether its
// client is still there (the call is thousands of times shorter than such
// a wait: BenchmarkPeerClosed), and one that waited less is never asked,
// so an uncongested server pays nothing for it.
const DefaultDropClosedAfter = 10 * time.Millisecond

// Resolved is a Config that Resolve accepted, with the pool's settings
// completed. kvserver resolves its Config once, at start: the start-up
// line, kvserver_config_info and the pool all read this, so none of them
// works a setting out again and what is logged is what runs.
type Resolved struct {
	Config
	// PoolConfig is Pcfg as the pool runs it: AutoCapacity,
	// AutoQueueTimeout and AutoMaxWait resolved, every default applied
	// by pool.Resolve (workers 0 is GOMAXPROCS; direct's and auto's exec
	// is handler), and DropClosedAfter as its AbandonAfter.
	PoolConfig pool.Config
}

// Resolve checks c and completes the pool's settings. The first setting
// that cannot work comes back as a *ConfigError naming its flag, its
// value and the accepted range.
func (c Config) Resolve() (Resolved, error) {
	p := c.Pcfg
	if p.Capacity == AutoCapacity {
		p.Capacity = c.MaxConns
	}
	if p.QueueTimeout == AutoQueueTimeout {
		p.QueueTimeout = 0
		if !pool.HandlerOnly(c.Pool) && c.Pool != "adaptive" {
			p.QueueTimeout = DefaultQueueTimeout
		}
	}
	if p.MaxWait == AutoMaxWait && c.Pool != pool.Auto {
		p.MaxWait = 0
	}
	p.AbandonAfter = c.DropClosedAfter
	resolved, combination := pool.Resolve(c.Pool, p) // -pool, -cap, -overflow, -exec and -limit together
	if err := c.check(p, combination); err != nil {
		return Resolved{}, err
	}
	return Resolved{Config: c, PoolConfig: resolved}, nil
}

// The bounds Resolve enforces beyond "makes sense": values past them are
// typing mistakes (an extra zero) that would otherwise surface as an
// out-of-memory crash or a server that never answers.
const (
	maxWorkers            = 1 << 16
	maxCapacity           = 1 << 24 // queues allocate their bound up front
	maxShardsPerWorker    = 64
	maxCacheMiB           = 1 << 20 // 1 TiB; also the row cache's
	maxMemTableMiB        = store.MaxMemTableBytes >> 20
	maxMemTableStopWrites = 64
	maxL0Threshold        = 1000
	maxBodyBytes          = 1 << 30 // bodies are held in memory
	maxKeyBytes           = 64 << 10
	maxHeaderBytes        = 1 << 20
	maxConns              = 1 << 20
	maxCoDelInterval      = time.Minute
	maxIODelay            = time.Minute
	maxIOConcurrency      = 1 << 20
)

// ConfigError is a setting kvserver cannot run with: the flag, the value
// it was given and what the flag accepts.
type ConfigError struct {
	Flag  string // the flag's name, without the dash: "workers"
	Value string // the value as given
	Want  string // what is accepted: "must be 0 (GOMAXPROCS) or more"
	Env   string // the KVPOOL_* variable the value came from, if it did
}

func (e *ConfigError) Error() string {
	v := e.Value
	if v == "" || strings.ContainsAny(v, " \t\n\"") {
		v = strconv.Quote(v)
	}
	if e.Env != "" {
		return fmt.Sprintf("-%s %s (from $%s): %s", e.Flag, v, e.Env, e.Want)
	}
	return fmt.Sprintf("-%s %s: %s", e.Flag, v, e.Want)
}

// check is Resolve's: the first setting that cannot work, given p, the
// pool's settings with the autos resolved, and why pool.Resolve refused
// them together, if it did.
func (c Config) check(p pool.Config, combination error) error {
	bad := func(flag string, value any, want string, args ...any) error {
		return &ConfigError{Flag: flag, Value: fmt.Sprint(value), Want: fmt.Sprintf(want, args...)}
	}
	raw := c.Pcfg
	lim := p.Limit
	switch {
	case c.Addr == "":
		return bad("addr", c.Addr, "must not be empty; e.g. 127.0.0.1:19234, or 127.0.0.1:0 for any free port")
	case c.DataDir == "":
		return bad("data", c.DataDir, "must not be empty; name a directory (created if missing)")
	case c.MaxConns < 1 || c.MaxConns > maxConns:
		// Before the pool's settings: -cap auto is -max-conns.
		return bad("max-conns", c.MaxConns, "must be between 1 and %d", maxConns)
	case !slices.Contains(pool.Variants, c.Pool):
		return bad("pool", c.Pool, "must be one of %s", strings.Join(pool.Variants, ", "))
	case p.Exec != pool.ExecHandler && p.Exec != pool.ExecWorker:
		return bad("exec", p.Exec, "must be handler or worker")
	case p.Workers < 0 || p.Workers > maxWorkers:
		return bad("workers", p.Workers, "must be 0 (GOMAXPROCS) or more, up to %d", maxWorkers)
	case raw.Capacity != AutoCapacity && (raw.Capacity < pool.Unbounded || raw.Capacity > maxCapacity):
		return bad("cap", raw.Capacity, "must be auto (-max-conns), -1 (unbounded), 0 (hand-off) or more, up to %d", maxCapacity)
	case p.Overflow > pool.OverflowBlock:
		return bad("overflow", p.Overflow, "must be reject, drop-oldest, caller-runs or block")
	case raw.QueueTimeout != AutoQueueTimeout && raw.QueueTimeout < 0:
		return bad("queue-timeout", raw.QueueTimeout, "must be auto, 0 (no limit) or more")
	case raw.MaxWait != AutoMaxWait && raw.MaxWait < 0:
		return bad("max-wait", raw.MaxWait, "must be auto, 0 (no bound) or more")
	case combination != nil && strings.Contains(combination.Error(), "-max-wait"):
		return bad("max-wait", maxWaitText(raw.MaxWait), "%v", combination)
	case !slices.Contains(limit.Algorithms, lim.Algorithm) && lim.Algorithm != "":
		return bad("limit", lim.Algorithm, "must be one of %s", strings.Join(limit.Algorithms, ", "))
	case lim.Min < 0 || lim.Min > maxWorkers:
		return bad("limit-min", lim.Min, "must be 0 (the pool's workers) or more, up to %d", maxWorkers)
	case lim.Max < 0 || lim.Max > maxWorkers:
		return bad("limit-max", lim.Max, "must be 0 (%d) or more, up to %d", limit.DefaultMax, maxWorkers)
	case lim.Min > 0 && lim.Max > 0 && lim.Min > lim.Max:
		return bad("limit-min", lim.Min, "must not be above -limit-max %d", lim.Max)
	case lim.Initial < 0 || lim.Initial > maxWorkers:
		return bad("limit-initial", lim.Initial, "must be 0 (4 per worker, within the bounds) or more, up to %d", maxWorkers)
	case lim.Initial > 0 && (lim.Min > 0 && lim.Initial < lim.Min || lim.Max > 0 && lim.Initial > lim.Max):
		return bad("limit-initial", lim.Initial, "must lie within -limit-min %d and -limit-max %d", lim.Min, lim.Max)
	case lim.Smoothing < 0 || lim.Smoothing > 1 || math.IsNaN(lim.Smoothing):
		return bad("limit-smoothing", lim.Smoothing, "must lie in (0, 1]")
	case lim.Backoff != 0 && (lim.Backoff < 0.5 || lim.Backoff >= 1 || math.IsNaN(lim.Backoff)):
		return bad("limit-backoff", lim.Backoff, "must lie in [0.5, 1)")
	case p.ShardsPerWorker < 1 || p.ShardsPerWorker > maxShardsPerWorker:
		return bad("shards-per-worker", p.ShardsPerWorker, "must be between 1 and %d", maxShardsPerWorker)
	case p.CoDelInterval <= 0 || p.CoDelInterval > maxCoDelInterval:
		return bad("codel-interval", p.CoDelInterval, "must be more than 0s, up to %v", maxCoDelInterval)
	case p.CoDelTarget <= 0 || p.CoDelTarget >= p.CoDelInterval:
		return bad("codel-target", p.CoDelTarget, "must be more than 0s and less than -codel-interval %v", p.CoDelInterval)
	case combination != nil && strings.Contains(combination.Error(), "-limit"):
		return bad("limit", lim.Algorithm, "%v", combination)
	case combination != nil:
		// What is left are -pool, -cap and -overflow combinations.
		return bad("cap", capText(raw.Capacity, p.Capacity), "%v", combination)
	case c.CacheMiB < 1 || c.CacheMiB > maxCacheMiB:
		return bad("cache-mb", c.CacheMiB, "must be between 1 and %d", maxCacheMiB)
	case c.RowCacheMiB < 0 || c.RowCacheMiB > maxCacheMiB:
		return bad("row-cache-mb", c.RowCacheMiB, "must be 0 (off) or a size in MiB, up to %d", maxCacheMiB)
	case !slices.Contains(store.Compressions, c.Compression):
		return bad("compression", c.Compression, "must be one of %v", store.Compressions)
	case c.MemTableMiB < 1 || c.MemTableMiB > maxMemTableMiB:
		return bad("memtable-mb", c.MemTableMiB, "must be between 1 and %d", maxMemTableMiB)
	case c.MemTableStopWrites < 2 || c.MemTableStopWrites > maxMemTableStopWrites:
		return bad("memtable-stop-writes", c.MemTableStopWrites, "must be between 2 and %d", maxMemTableStopWrites)
	case c.L0CompactionThreshold < 1 || c.L0CompactionThreshold > maxL0Threshold:
		return bad("l0-compaction-threshold", c.L0CompactionThreshold, "must be between 1 and %d", maxL0Threshold)
	case c.L0StopWritesThreshold < c.L0CompactionThreshold || c.L0StopWritesThreshold > maxL0Threshold:
		return bad("l0-stop-writes-threshold", c.L0StopWritesThreshold,
			"must be between -l0-compaction-threshold %d and %d", c.L0CompactionThreshold, maxL0Threshold)
	case c.ValueSeparationMinBytes < 0 || c.ValueSeparationMinBytes > maxBodyBytes:
		return bad("value-separation-min", c.ValueSeparationMinBytes, "must be 0 (off) or a size in bytes, up to %d", maxBodyBytes)
	case c.IODelay < 0 || c.IODelay > maxIODelay:
		return bad("io-delay", c.IODelay, "must be 0 (off) or more, up to %v", maxIODelay)
	case !slices.Contains(store.DelayDists, c.IODelayDist):
		return bad("io-delay-dist", c.IODelayDist, "must be one of %v", store.DelayDists)
	case c.IOConcurrency < 0 || c.IOConcurrency > maxIOConcurrency:
		return bad("io-concurrency", c.IOConcurrency, "must be 0 (unbounded) or a number of store operations at once, up to %d", maxIOConcurrency)
	case c.DropClosedAfter < 0:
		return bad("drop-closed-after", c.DropClosedAfter, "must be 0 (never look) or a duration such as 10ms")
	case c.MaxBodyBytes < 1 || c.MaxBodyBytes > maxBodyBytes:
		return bad("max-body", c.MaxBodyBytes, "must be between 1 and %d bytes", maxBodyBytes)
	case c.MaxKeyBytes < 1 || c.MaxKeyBytes > maxKeyBytes:
		return bad("max-key", c.MaxKeyBytes, "must be between 1 and %d bytes", maxKeyBytes)
	case c.MaxHeaderBytes < minHeaderBytes(c.MaxKeyBytes) || c.MaxHeaderBytes > maxHeaderBytes:
		return bad("max-header", c.MaxHeaderBytes,
			"must be between %d (a request whose id is -max-key %d bytes, percent-encoded) and %d bytes",
			minHeaderBytes(c.MaxKeyBytes), c.MaxKeyBytes, maxHeaderBytes)
	case c.ReadTimeout < 0:
		return bad("read-timeout", c.ReadTimeout, "must be 0 (none) or more")
	case c.WriteTimeout < 0:
		return bad("write-timeout", c.WriteTimeout, "must be 0 (none) or more")
	case c.IdleTimeout < 0:
		return bad("idle-timeout", c.IdleTimeout, "must be 0 (none) or more")
	case c.MaxConnsPerIP < 0 || c.MaxConnsPerIP > maxConns:
		return bad("max-conns-per-ip", c.MaxConnsPerIP, "must be 0 (no limit) or more, up to %d", maxConns)
	case c.ShutdownTimeout <= 0:
		return bad("shutdown-timeout", c.ShutdownTimeout, "must be more than 0s")
	case c.MutexProfileFraction < 0:
		return bad("mutex-profile-fraction", c.MutexProfileFraction, "must be 0 (off) or more")
	case c.BlockProfileRate < 0:
		return bad("block-profile-rate", c.BlockProfileRate, "must be 0 (off) or more")
	}
	return nil
}

// maxWaitText is -max-wait as given.
func maxWaitText(d time.Duration) string {
	if d == AutoMaxWait {
		return "auto"
	}
	return d.String()
}

// MaxWaitText is a resolved pool.Config.MaxWait as the start-up line and
// the config metric show it: "auto" where the pool derives it from the
// store, "0s" where there is none.
func MaxWaitText(d time.Duration) string { return maxWaitText(d) }

// capText is -cap as given, with what auto stands for.
func capText(raw, resolved int) string {
	if raw == AutoCapacity {
		return fmt.Sprintf("auto (-max-conns %d)", resolved)
	}
	return strconv.Itoa(raw)
}

// minHeaderBytes is the smallest -max-header under which every id the key
// limit admits still reaches the handler: the longest request line (an id
// of maxKey bytes, each percent-encoded as three) plus room for the usual
// headers (Host, Content-Length, User-Agent...).
func minHeaderBytes(maxKey int) int {
	const requestLine = len("DELETE " + pathEntity + "?id=" + " HTTP/1.1\r\n")
	const headers = 512
	return requestLine + 3*maxKey + headers
}

// StoreOptions is the store.Options c asks for: what kvserver opens its
// Pebble store with.
func (c Config) StoreOptions(log *slog.Logger) store.Options {
	return store.Options{
		Dir:                     c.DataDir,
		Sync:                    c.Sync,
		CacheBytes:              int64(c.CacheMiB) << 20,
		Logger:                  log,
		Compression:             c.Compression,
		MemTableBytes:           int64(c.MemTableMiB) << 20,
		MemTableStopWrites:      c.MemTableStopWrites,
		L0CompactionThreshold:   c.L0CompactionThreshold,
		L0StopWritesThreshold:   c.L0StopWritesThreshold,
		ValueSeparationMinBytes: c.ValueSeparationMinBytes,
		CompactOnOpen:           c.CompactOnOpen,
	}
}

// LogAttrs lists every effective setting, defaults resolved (workers is
// GOMAXPROCS's value when 0 was asked for), for the one line kvserver logs
// at start. Keys are the flags' names with underscores.
func (c Resolved) LogAttrs() []any {
	p := c.PoolConfig
	return []any{
		"addr", c.Addr, "data", c.DataDir,
		"pool", c.Pool, "exec", p.Exec.String(), "workers", p.Workers, "cap", p.Capacity, "overflow", p.Overflow.String(),
		"queue_timeout", p.QueueTimeout, "max_wait", maxWaitText(p.MaxWait), "limit", limitName(p.Limit),
		"limit_min", p.Limit.Min, "limit_max", p.Limit.Max, "limit_initial", p.Limit.Initial,
		"limit_smoothing", p.Limit.Smoothing, "limit_backoff", p.Limit.Backoff,
		"shards_per_worker", p.ShardsPerWorker,
		"codel_target", p.CoDelTarget, "codel_interval", p.CoDelInterval,
		"sync", c.Sync, "cache_mb", c.CacheMiB, "row_cache_mb", c.RowCacheMiB,
		"compression", string(c.Compression), "memtable_mb", c.MemTableMiB, "memtable_stop_writes", c.MemTableStopWrites,
		"l0_compaction_threshold", c.L0CompactionThreshold, "l0_stop_writes_threshold", c.L0StopWritesThreshold,
		"value_separation_min", c.ValueSeparationMinBytes,
		"compact_at_start", c.CompactOnOpen,
		"io_delay", c.IODelay, "io_delay_dist", string(c.IODelayDist), "io_concurrency", c.IOConcurrency,
		"drop_closed_after", c.DropClosedAfter,
		"max_body", c.MaxBodyBytes, "max_key", c.MaxKeyBytes, "max_header", c.MaxHeaderBytes,
		"read_timeout", c.ReadTimeout, "write_timeout", c.WriteTimeout, "idle_timeout", c.IdleTimeout,
		"max_conns", c.MaxConns, "max_conns_per_ip", c.MaxConnsPerIP, "shutdown_timeout", c.ShutdownTimeout,
		"mutex_profile_fraction", c.MutexProfileFraction, "block_profile_rate", c.BlockProfileRate,
		"pprof_remote", c.PprofRemote, "log_level", strings.ToLower(c.LogLevel.String()),
	}
}
