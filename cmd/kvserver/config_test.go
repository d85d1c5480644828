package main

import (
	"errors"
	"flag"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kvpool/kvpool/internal/pool"
	"github.com/kvpool/kvpool/internal/server"
	"github.com/kvpool/kvpool/internal/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestDefaults(t *testing.T) {
	c, err := parseConfig(nil, env(nil))
	require.NoError(t, err)
	assert.Equal(t, server.DefaultConfig(), c.Config)
	assert.Equal(t, slog.LevelInfo, c.LogLevel)
	// A bare start runs the admission that needs no tuning: the auto
	// pool, its slots adapting, its waits bounded by the store's speed.
	p := c.PoolConfig
	assert.Equal(t, pool.Auto, c.Pool)
	assert.Equal(t, "vegas", p.Limit.Algorithm)
	assert.Equal(t, pool.AutoMaxWait, p.MaxWait)
	assert.Equal(t, pool.ExecHandler, p.Exec)
}

func TestFlagsThenEnv(t *testing.T) {
	c, err := parseConfig(
		[]string{"-pool", "fifo", "-cap", "0", "-overflow", "caller-runs", "-sync", "-io-delay", "2ms", "-compression", "none",
			"-io-concurrency", "16"},
		env(map[string]string{
			"KVPOOL_POOL":                 "direct", // the flag wins
			"KVPOOL_WORKERS":              "3",
			"KVPOOL_QUEUE_TIMEOUT":        "250ms",
			"KVPOOL_MAX_BODY":             "4096",
			"KVPOOL_MAX_HEADER":           "16384",
			"KVPOOL_MAX_CONNS_PER_IP":     "8",
			"KVPOOL_LOG_LEVEL":            "debug",
			"KVPOOL_IO_DELAY_DIST":        "exp",
			"KVPOOL_SHARDS_PER_WORKER":    "4",
			"KVPOOL_CODEL_TARGET":         "2ms",
			"KVPOOL_MEMTABLE_MB":          "128",
			"KVPOOL_VALUE_SEPARATION_MIN": "256",
			"KVPOOL_DROP_CLOSED_AFTER":    "50ms",
			"KVPOOL_ROW_CACHE_MB":         "0",
		}))
	require.NoError(t, err)
	assert.Equal(t, "fifo", c.Pool)
	assert.Equal(t, 0, c.Pcfg.Capacity)
	assert.Equal(t, pool.OverflowCallerRuns, c.Pcfg.Overflow)
	assert.True(t, c.Sync)
	assert.Equal(t, 3, c.Pcfg.Workers)
	assert.Equal(t, 250*time.Millisecond, c.Pcfg.QueueTimeout)
	assert.Equal(t, 4, c.Pcfg.ShardsPerWorker)
	assert.Equal(t, 2*time.Millisecond, c.Pcfg.CoDelTarget)
	assert.Equal(t, 4096, c.MaxBodyBytes)
	assert.Equal(t, 16384, c.MaxHeaderBytes)
	assert.Equal(t, 8, c.MaxConnsPerIP)
	assert.Equal(t, slog.LevelDebug, c.LogLevel)
	assert.Equal(t, 2*time.Millisecond, c.IODelay)
	assert.Equal(t, store.DelayExp, c.IODelayDist)
	assert.Equal(t, 16, c.IOConcurrency)
	assert.Equal(t, 50*time.Millisecond, c.DropClosedAfter)
	assert.Equal(t, store.CompressionNone, c.Compression)
	assert.Equal(t, 128, c.MemTableMiB)
	assert.Equal(t, 256, c.ValueSeparationMinBytes)
	assert.Equal(t, 0, c.RowCacheMiB, "an env 0 turns the row cache off")
}

// TestBadSettingsNameTheFlag: every refused value, unparsable or out of
// range, from a flag or from its KVPOOL_* variable, comes back as a
// *server.ConfigError naming that flag (and the variable), with the value
// and what the flag accepts in the message.
func TestBadSettingsNameTheFlag(t *testing.T) {
	f := func(args []string, kv map[string]string, wantFlag, wantInMessage string) {
		t.Helper()
		_, err := parseConfig(args, env(kv))
		require.Error(t, err)
		var ce *server.ConfigError
		require.True(t, errors.As(err, &ce), "%q is not a ConfigError", err)
		assert.Equal(t, wantFlag, ce.Flag, "flag named by %q", err)
		msg := err.Error()
		assert.True(t, strings.HasPrefix(msg, "-"+wantFlag+" "), "%q starts with the flag", msg)
		assert.Contains(t, msg, wantInMessage)
		for name := range kv {
			assert.Equal(t, name, ce.Env, "the variable the value came from")
			assert.Contains(t, msg, "$"+name)
		}
	}
	flagArg := func(name, value string) []string { return []string{"-" + name, value} }

	// Out of range, each with its accepted range in the message.
	f(flagArg("workers", "-3"), nil, "workers", "-workers -3: must be 0 (GOMAXPROCS) or more")
	f(flagArg("workers", "100000000"), nil, "workers", "up to")
	f(flagArg("shards-per-worker", "-2"), nil, "shards-per-worker", "between 1 and 64")
	f(flagArg("shards-per-worker", "0"), nil, "shards-per-worker", "between 1 and 64")
	f(flagArg("cap", "-2"), nil, "cap", "-1 (unbounded)")
	f(flagArg("cap", "many"), nil, "cap", "auto (-max-conns)")
	f(flagArg("exec", "thread"), nil, "exec", "handler or worker")
	f(flagArg("limit", "magic"), nil, "limit", "fixed, gradient2, vegas, aimd")
	f([]string{"-pool", "lifo", "-limit", "vegas", "-exec", "worker"}, nil, "limit", "-exec handler")
	f([]string{"-pool", "direct", "-limit", "vegas"}, nil, "limit", "direct has no slots")
	f(flagArg("max-wait", "-5ms"), nil, "max-wait", "auto, 0 (no bound) or more")
	f(flagArg("max-wait", "soon"), nil, "max-wait", "")
	f([]string{"-pool", "direct", "-max-wait", "20ms"}, nil, "max-wait", "direct queues nothing")
	f([]string{"-pool", "lifo", "-limit", "gradient2", "-limit-min", "50", "-limit-max", "20"}, nil, "limit-min", "-limit-max 20")
	f([]string{"-pool", "lifo", "-limit", "gradient2", "-limit-initial", "5", "-limit-min", "10"}, nil, "limit-initial", "-limit-min 10")
	f(flagArg("limit-min", "-1"), nil, "limit-min", "0 (the pool's workers)")
	f(flagArg("limit-smoothing", "0"), nil, "limit-smoothing", "(0, 1]")
	f(flagArg("limit-smoothing", "1.5"), nil, "limit-smoothing", "(0, 1]")
	f(flagArg("limit-backoff", "0.3"), nil, "limit-backoff", "[0.5, 1)")
	f(flagArg("limit-backoff", "1"), nil, "limit-backoff", "[0.5, 1)")
	f(flagArg("cap", "1000000000"), nil, "cap", "up to")
	f([]string{"-pool", "lifo", "-cap", "0"}, nil, "cap", "fifo")
	f(flagArg("pool", "stack"), nil, "pool", "adaptive")
	f(flagArg("queue-timeout", "-1s"), nil, "queue-timeout", "0 (no limit) or more")
	f(flagArg("queue-timeout", "soon"), nil, "queue-timeout", "250ms")
	f(flagArg("codel-target", "0s"), nil, "codel-target", "more than 0s")
	f(flagArg("codel-target", "200ms"), nil, "codel-target", "less than -codel-interval 100ms")
	f(flagArg("codel-interval", "-5ms"), nil, "codel-interval", "more than 0s")
	f(flagArg("cache-mb", "-1"), nil, "cache-mb", "between 1 and")
	f(flagArg("row-cache-mb", "-1"), nil, "row-cache-mb", "0 (off)")
	f(flagArg("memtable-mb", "0"), nil, "memtable-mb", "between 1 and 4095")
	f(flagArg("memtable-mb", "4096"), nil, "memtable-mb", "between 1 and 4095")
	f(flagArg("l0-compaction-threshold", "0"), nil, "l0-compaction-threshold", "between 1 and 1000")
	f(flagArg("l0-stop-writes-threshold", "3"), nil, "l0-stop-writes-threshold", "-l0-compaction-threshold 4")
	f(flagArg("value-separation-min", "-1"), nil, "value-separation-min", "0 (off)")
	f(flagArg("io-delay", "-1ms"), nil, "io-delay", "0 (off) or more")
	f(flagArg("io-delay", "2h"), nil, "io-delay", "up to 1m0s")
	f(flagArg("io-concurrency", "-1"), nil, "io-concurrency", "-io-concurrency -1: must be 0 (unbounded) or a number of store operations at once")
	f(flagArg("io-concurrency", "lots"), nil, "io-concurrency", "whole number")
	f(nil, map[string]string{"KVPOOL_IO_CONCURRENCY": "-16"}, "io-concurrency", "0 (unbounded)")
	f(flagArg("drop-closed-after", "-1ms"), nil, "drop-closed-after", "0 (never look)")
	f(flagArg("max-body", "0"), nil, "max-body", "between 1 and")
	f(flagArg("max-key", "0"), nil, "max-key", "between 1 and")
	f(flagArg("max-header", "1024"), nil, "max-header", "-max-key 1024")
	f(flagArg("max-key", "4096"), nil, "max-header", "-max-key 4096") // its encoded form no longer fits the default -max-header
	f(flagArg("read-timeout", "-1s"), nil, "read-timeout", "0 (none) or more")
	f(flagArg("write-timeout", "-1s"), nil, "write-timeout", "0 (none) or more")
	f(flagArg("idle-timeout", "-1s"), nil, "idle-timeout", "0 (none) or more")
	f(flagArg("shutdown-timeout", "0s"), nil, "shutdown-timeout", "more than 0s")
	f(flagArg("max-conns", "0"), nil, "max-conns", "between 1 and")
	f(flagArg("max-conns-per-ip", "-1"), nil, "max-conns-per-ip", "0 (no limit)")
	f(flagArg("mutex-profile-fraction", "-1"), nil, "mutex-profile-fraction", "0 (off)")
	f(flagArg("block-profile-rate", "-1"), nil, "block-profile-rate", "0 (off)")
	f(flagArg("addr", ""), nil, "addr", `-addr "": must not be empty`)
	f(flagArg("data", ""), nil, "data", "must not be empty")

	// Unparsable.
	f(flagArg("overflow", "sometimes"), nil, "overflow", "sometimes")
	f(flagArg("compression", "gzip"), nil, "compression", "snappy")
	f(flagArg("io-delay-dist", "normal"), nil, "io-delay-dist", "exp")
	f(flagArg("log-level", "loud"), nil, "log-level", "debug, info, warn or error")
	f(flagArg("workers", "many"), nil, "workers", "whole number")
	f([]string{"-sync=maybe"}, nil, "sync", "true or false")
	f(flagArg("read-timeout", "soon"), nil, "read-timeout", "250ms")

	// Durations without a unit say that one is needed, flag or variable.
	for _, name := range []string{"queue-timeout", "codel-target", "codel-interval", "io-delay", "drop-closed-after",
		"read-timeout", "write-timeout", "idle-timeout", "shutdown-timeout"} {
		f(flagArg(name, "5"), nil, name, "-"+name+" 5: a duration needs a unit: write e.g. 5ms or 5s")
		f(nil, map[string]string{envName(name): "5"}, name, "a duration needs a unit")
	}

	// From the environment: unparsable, and parsed but out of range.
	f(nil, map[string]string{"KVPOOL_WORKERS": "many"}, "workers", "whole number")
	f(nil, map[string]string{"KVPOOL_MAX_BODY": "0"}, "max-body", "-max-body 0 (from $KVPOOL_MAX_BODY): must be between 1")
	f(nil, map[string]string{"KVPOOL_SHARDS_PER_WORKER": "-2"}, "shards-per-worker", "between 1 and 64")
}

// TestEveryFlagIsCheckedAndLogged: each flag appears in the start-up
// line's keys (so none is forgotten there), and each number or duration
// flag refuses a negative value, naming itself (so none is forgotten in
// Validate).
func TestEveryFlagIsCheckedAndLogged(t *testing.T) {
	c := server.DefaultConfig()
	fs := flag.NewFlagSet("kvserver", flag.ContinueOnError)
	defineFlags(fs, &c)
	logged := map[string]bool{}
	r, err := c.Resolve()
	require.NoError(t, err)
	attrs := r.LogAttrs()
	for i := 0; i < len(attrs); i += 2 {
		logged[attrs[i].(string)] = true
	}
	checked := 0
	fs.VisitAll(func(fl *flag.Flag) {
		assert.True(t, logged[strings.ReplaceAll(fl.Name, "-", "_")], "-%s missing from LogAttrs", fl.Name)
		var negative string
		switch fl.Value.(type) {
		case *value[int]:
			negative = "-2" // -cap -1 means unbounded
		case *value[time.Duration]:
			negative = "-1s"
		default:
			return
		}
		checked++
		_, err := parseConfig([]string{"-" + fl.Name, negative}, env(nil))
		var ce *server.ConfigError
		if assert.True(t, errors.As(err, &ce), "-%s %s: got %v, want a ConfigError", fl.Name, negative, err) {
			assert.Equal(t, fl.Name, ce.Flag)
		}
	})
	assert.Greater(t, checked, 20, "number and duration flags found")
}

// TestHelp: -h lists every flag with its value's name and its default,
// and says where else values come from and what a bad one does.
func TestHelp(t *testing.T) {
	var out strings.Builder
	usageOutput = &out
	defer func() { usageOutput = os.Stderr }()
	_, err := parseConfig([]string{"-h"}, env(nil))
	require.ErrorIs(t, err, flag.ErrHelp)
	for _, want := range []string{"-workers n", "-io-delay duration", "-io-delay-dist distribution", "-compression compression",
		"-io-concurrency n", "-drop-closed-after duration", "(default 10ms)",
		"$KVPOOL_NAME", "status 2", "(default 5ms)", "(default 100ms)", "(default snappy)", "(default fixed)", "(default info)"} {
		assert.Contains(t, out.String(), want)
	}
}

func TestUnknownFlagPointsToHelp(t *testing.T) {
	_, err := parseConfig([]string{"-nope"}, env(nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-nope")
	assert.Contains(t, err.Error(), "kvserver -h")
	_, err = parseConfig([]string{"stray"}, env(nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "stray")
}
