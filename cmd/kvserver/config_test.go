package main

import (
	"log/slog"
	"testing"
	"time"

	"github.com/kvpool/kvpool/internal/pool"
	"github.com/kvpool/kvpool/internal/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestDefaults(t *testing.T) {
	c, level, err := parseConfig(nil, env(nil))
	require.NoError(t, err)
	want := server.DefaultConfig()
	want.Pcfg.ShardsPerWorker = 2
	assert.Equal(t, want, c)
	assert.Equal(t, slog.LevelInfo, level)
}

func TestFlagsThenEnv(t *testing.T) {
	c, level, err := parseConfig(
		[]string{"-pool", "fifo", "-cap", "0", "-overflow", "caller-runs", "-sync"},
		env(map[string]string{
			"KVPOOL_POOL":             "direct", // the flag wins
			"KVPOOL_WORKERS":          "3",
			"KVPOOL_QUEUE_TIMEOUT":    "250ms",
			"KVPOOL_MAX_BODY":         "4096",
			"KVPOOL_MAX_HEADER":       "16384",
			"KVPOOL_MAX_CONNS_PER_IP": "8",
			"KVPOOL_LOG_LEVEL":        "debug",
		}))
	require.NoError(t, err)
	assert.Equal(t, "fifo", c.Pool)
	assert.Equal(t, 0, c.Pcfg.Capacity)
	assert.Equal(t, pool.OverflowCallerRuns, c.Pcfg.Overflow)
	assert.True(t, c.Sync)
	assert.Equal(t, 3, c.Pcfg.Workers)
	assert.Equal(t, 250*time.Millisecond, c.Pcfg.QueueTimeout)
	assert.Equal(t, 4096, c.MaxBodyBytes)
	assert.Equal(t, 16384, c.MaxHeaderBytes)
	assert.Equal(t, 8, c.MaxConnsPerIP)
	assert.Equal(t, slog.LevelDebug, level)
}

func TestBadSettingsAreErrors(t *testing.T) {
	f := func(args []string, kv map[string]string, wantInError string) {
		t.Helper()
		_, _, err := parseConfig(args, env(kv))
		require.Error(t, err)
		assert.Contains(t, err.Error(), wantInError)
	}
	f([]string{"-overflow", "sometimes"}, nil, "sometimes")
	f(nil, map[string]string{"KVPOOL_WORKERS": "many"}, "KVPOOL_WORKERS")
	f(nil, map[string]string{"KVPOOL_MAX_BODY": "0"}, "-max-body")
	f([]string{"-cache-mb", "-1"}, nil, "-cache-mb")
	f([]string{"stray"}, nil, "stray")
	f([]string{"-max-header", "1024"}, nil, "-max-header")
	f([]string{"-max-key", "4096"}, nil, "-max-key 4096") // its encoded form no longer fits the default -max-header
	f([]string{"-max-conns-per-ip", "-1"}, nil, "-max-conns-per-ip")
	f([]string{"-read-timeout", "-1s"}, nil, "negative")
}
