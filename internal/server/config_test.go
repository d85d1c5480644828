package server

import (
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kvpool/kvpool/internal/pool"
	"github.com/kvpool/kvpool/internal/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigResolveNamesTheFlag: each setting Resolve refuses comes back
// as a *ConfigError naming the flag that sets it, with the value given.
func TestConfigResolveNamesTheFlag(t *testing.T) {
	_, err := DefaultConfig().Resolve()
	require.NoError(t, err)
	f := func(mutate func(*Config), wantFlag, wantValue string) {
		t.Helper()
		c := DefaultConfig()
		mutate(&c)
		_, err := c.Resolve()
		var ce *ConfigError
		require.True(t, errors.As(err, &ce), "got %v, want a ConfigError", err)
		assert.Equal(t, wantFlag, ce.Flag, "%v", err)
		assert.Equal(t, wantValue, ce.Value, "%v", err)
		assert.True(t, strings.HasPrefix(err.Error(), "-"+wantFlag+" "), "%q", err)
	}
	f(func(c *Config) { c.Addr = "" }, "addr", "")
	f(func(c *Config) { c.DataDir = "" }, "data", "")
	f(func(c *Config) { c.Pool = "stack" }, "pool", "stack")
	f(func(c *Config) { c.Pcfg.Workers = -3 }, "workers", "-3")
	f(func(c *Config) { c.Pcfg.Capacity = -3 }, "cap", "-3")
	f(func(c *Config) { c.Pcfg.Exec = pool.Exec(7) }, "exec", "Exec(7)")
	f(func(c *Config) { c.Pool, c.Pcfg.Limit.Algorithm = "lifo", "magic" }, "limit", "magic")
	f(func(c *Config) { c.Pool, c.Pcfg.Limit.Algorithm = "direct", "vegas" }, "limit", "vegas")
	f(func(c *Config) { c.Pool, c.Pcfg.Exec, c.Pcfg.Limit.Algorithm = "lifo", pool.ExecWorker, "aimd" }, "limit", "aimd")
	f(func(c *Config) { c.Pool, c.Pcfg.Limit.Min, c.Pcfg.Limit.Max = "lifo", 9, 3 }, "limit-min", "9")
	f(func(c *Config) { c.Pool, c.Pcfg.Limit.Initial, c.Pcfg.Limit.Max = "lifo", 9, 3 }, "limit-initial", "9")
	f(func(c *Config) { c.Pcfg.Limit.Smoothing = 2 }, "limit-smoothing", "2")
	f(func(c *Config) { c.Pcfg.Limit.Backoff = 0.2 }, "limit-backoff", "0.2")
	f(func(c *Config) { c.Pool, c.MaxConns, c.Pcfg.Capacity = "lifo", 0, AutoCapacity }, "max-conns", "0")
	f(func(c *Config) { c.Pool, c.Pcfg.Capacity = "msqueue", 0 }, "cap", "0")
	f(func(c *Config) { c.Pool, c.Pcfg.Capacity, c.Pcfg.Overflow = "fifo", pool.Unbounded, pool.OverflowBlock }, "cap", "-1")
	f(func(c *Config) { c.Pcfg.Overflow = pool.Overflow(9) }, "overflow", "Overflow(9)")
	f(func(c *Config) { c.Pcfg.QueueTimeout = -time.Second }, "queue-timeout", "-1s")
	f(func(c *Config) { c.Pcfg.MaxWait = -time.Second }, "max-wait", "-1s")
	f(func(c *Config) { c.Pool, c.Pcfg.MaxWait = "direct", 20*time.Millisecond }, "max-wait", "20ms")
	f(func(c *Config) { c.Pool, c.Pcfg.Exec, c.Pcfg.MaxWait = "fifo", pool.ExecWorker, 20*time.Millisecond }, "max-wait", "20ms")
	f(func(c *Config) { c.Pcfg.ShardsPerWorker = -2 }, "shards-per-worker", "-2")
	f(func(c *Config) { c.Pcfg.ShardsPerWorker = 65 }, "shards-per-worker", "65")
	f(func(c *Config) { c.Pcfg.CoDelTarget = 0 }, "codel-target", "0s")
	f(func(c *Config) { c.Pcfg.CoDelTarget = time.Second }, "codel-target", "1s")
	f(func(c *Config) { c.Pcfg.CoDelInterval = 0 }, "codel-interval", "0s")
	f(func(c *Config) { c.Pcfg.CoDelInterval = time.Hour }, "codel-interval", "1h0m0s")
	f(func(c *Config) { c.CacheMiB = 0 }, "cache-mb", "0")
	f(func(c *Config) { c.RowCacheMiB = -1 }, "row-cache-mb", "-1")
	f(func(c *Config) { c.RowCacheMiB = 1<<20 + 1 }, "row-cache-mb", "1048577")
	f(func(c *Config) { c.Compression = "lz4" }, "compression", "lz4")
	f(func(c *Config) { c.MemTableMiB = 0 }, "memtable-mb", "0")
	f(func(c *Config) { c.MemTableStopWrites = 1 }, "memtable-stop-writes", "1")
	f(func(c *Config) { c.MemTableStopWrites = 65 }, "memtable-stop-writes", "65")
	f(func(c *Config) { c.L0CompactionThreshold = 0 }, "l0-compaction-threshold", "0")
	f(func(c *Config) { c.L0StopWritesThreshold = 3 }, "l0-stop-writes-threshold", "3")
	f(func(c *Config) { c.ValueSeparationMinBytes = -1 }, "value-separation-min", "-1")
	f(func(c *Config) { c.IODelay = -time.Millisecond }, "io-delay", "-1ms")
	f(func(c *Config) { c.IODelayDist = "normal" }, "io-delay-dist", "normal")
	f(func(c *Config) { c.IOConcurrency = -1 }, "io-concurrency", "-1")
	f(func(c *Config) { c.IOConcurrency = 1<<20 + 1 }, "io-concurrency", "1048577")
	f(func(c *Config) { c.DropClosedAfter = -time.Millisecond }, "drop-closed-after", "-1ms")
	f(func(c *Config) { c.MaxBodyBytes = 0 }, "max-body", "0")
	f(func(c *Config) { c.MaxKeyBytes = -1 }, "max-key", "-1")
	f(func(c *Config) { c.MaxKeyBytes = 4096 }, "max-header", "8192")
	f(func(c *Config) { c.MaxHeaderBytes = 100 }, "max-header", "100")
	f(func(c *Config) { c.ReadTimeout = -time.Second }, "read-timeout", "-1s")
	f(func(c *Config) { c.WriteTimeout = -time.Second }, "write-timeout", "-1s")
	f(func(c *Config) { c.IdleTimeout = -time.Second }, "idle-timeout", "-1s")
	f(func(c *Config) { c.ShutdownTimeout = 0 }, "shutdown-timeout", "0s")
	f(func(c *Config) { c.MaxConns = 0 }, "max-conns", "0")
	f(func(c *Config) { c.MaxConnsPerIP = -1 }, "max-conns-per-ip", "-1")
	f(func(c *Config) { c.MutexProfileFraction = -1 }, "mutex-profile-fraction", "-1")
	f(func(c *Config) { c.BlockProfileRate = -1 }, "block-profile-rate", "-1")
}

func TestConfigErrorMessage(t *testing.T) {
	f := func(e ConfigError, want string) {
		t.Helper()
		assert.Equal(t, want, e.Error())
	}
	f(ConfigError{Flag: "workers", Value: "-3", Want: "must be 0 (GOMAXPROCS) or more"}, "-workers -3: must be 0 (GOMAXPROCS) or more")
	f(ConfigError{Flag: "addr", Value: "", Want: "must not be empty"}, `-addr "": must not be empty`)
	f(ConfigError{Flag: "max-body", Value: "0", Want: "must be positive", Env: "KVPOOL_MAX_BODY"}, "-max-body 0 (from $KVPOOL_MAX_BODY): must be positive")
}

// TestLogAttrsEverySetting: the start-up line carries every setting with
// its effective value: defaults resolved, workers as GOMAXPROCS when 0.
func TestLogAttrsEverySetting(t *testing.T) {
	c := DefaultConfig()
	c.IODelay, c.IODelayDist = 3*time.Millisecond, store.DelayExp
	c.PprofRemote, c.LogLevel = true, slog.LevelDebug
	attrs := resolved(t, c).LogAttrs()
	require.Zero(t, len(attrs)%2)
	got := map[string]string{}
	for i := 0; i < len(attrs); i += 2 {
		key := attrs[i].(string)
		assert.NotContains(t, got, key, "key %s twice", key)
		got[key] = fmt.Sprint(attrs[i+1])
	}
	want := map[string]string{
		"workers":           fmt.Sprint(runtime.GOMAXPROCS(0)),
		"shards_per_worker": "2",
		"codel_target":      "5ms",
		"codel_interval":    "100ms",
		"io_delay":          "3ms",
		"io_delay_dist":     "exp",
		"io_concurrency":    "0",
		"drop_closed_after": "10ms",
		"pprof_remote":      "true",
		"log_level":         "debug",
		"compression":       "snappy",
		"memtable_mb":       "64",
		"cap":               "10000", // auto: -max-conns
		"queue_timeout":     "0s",    // auto: none for the auto pool, which bounds waits in time
		"max_wait":          "auto",  // derived from the store's speed
		"exec":              "handler",
		"limit":             "vegas", // the auto pool's slots find the store's concurrency
		"pool":              "auto",
	}
	for k, v := range want {
		assert.Equal(t, v, got[k], "%s", k)
	}
	// One attribute per Config field (Pcfg's OnWait, a hook, is not a
	// setting); the limit's six settings for Pcfg.Limit.
	// limit, limit_min, limit_max, limit_initial, limit_smoothing, limit_backoff:
	const limitSettings = 6
	// Config's fields but Pcfg, pool.Config's but OnWait, Limit and
	// AbandonAfter (which is DropClosedAfter):
	settings := exportedFields(Config{}) - 1 + exportedFields(pool.Config{}) - 3 + limitSettings
	assert.Equal(t, settings, len(got), "attributes %v", got)

	c.Pool = "lifo"
	attrs = resolved(t, c).LogAttrs()
	for i := 0; i < len(attrs); i += 2 {
		got[attrs[i].(string)] = fmt.Sprint(attrs[i+1])
	}
	assert.Equal(t, DefaultQueueTimeout.String(), got["queue_timeout"], "auto: a queueing pool sheds by age")
	assert.Equal(t, "0s", got["max_wait"], "auto: the lab's pools are not bounded in time")
	assert.Equal(t, "fixed", got["limit"])
}

func exportedFields(v any) int {
	n := 0
	for _, f := range reflect.VisibleFields(reflect.TypeOf(v)) {
		if f.IsExported() {
			n++
		}
	}
	return n
}

// TestStoreOptions: the Pebble settings reach store.Options.
func TestStoreOptions(t *testing.T) {
	c := DefaultConfig()
	c.DataDir, c.Sync, c.CacheMiB = "/x", true, 16
	c.Compression, c.MemTableMiB, c.ValueSeparationMinBytes = store.CompressionNone, 128, 256
	c.MemTableStopWrites = 6
	c.L0CompactionThreshold, c.L0StopWritesThreshold = 8, 32
	log := slog.Default()
	assert.Equal(t, store.Options{
		Dir: "/x", Sync: true, CacheBytes: 16 << 20, Logger: log,
		Compression: store.CompressionNone, MemTableBytes: 128 << 20, MemTableStopWrites: 6, ValueSeparationMinBytes: 256,
		L0CompactionThreshold: 8, L0StopWritesThreshold: 32,
	}, c.StoreOptions(log))
}
