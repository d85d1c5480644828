package server

import (
	"fmt"
	"runtime"
	"time"

	"github.com/kvpool/kvpool/internal/pool"
)

// Config is everything kvserver can be told. cmd/kvserver fills it from
// flags with KVPOOL_* environment fallbacks; tests fill it directly.
type Config struct {
	Addr    string // listen address; loopback by default
	DataDir string // Pebble's directory

	Pool string      // pool variant, one of pool.Variants
	Pcfg pool.Config // workers, capacity, overflow, queue timeout, ...

	Sync     bool // fsync the WAL before acknowledging each write
	CacheMiB int  // Pebble block cache

	MaxBodyBytes int // larger request bodies are answered 413
	MaxKeyBytes  int // longer ids are answered 400

	ReadTimeout     time.Duration // reading one request, headers and body
	WriteTimeout    time.Duration // writing one response
	IdleTimeout     time.Duration // a keep-alive connection waiting for its next request
	MaxConns        int           // connections served at once; more are refused
	ShutdownTimeout time.Duration // how long a graceful stop waits for requests in flight

	MutexProfileFraction int // runtime.SetMutexProfileFraction; 0 = off
	BlockProfileRate     int // runtime.SetBlockProfileRate; 0 = off
}

// DefaultConfig is what kvserver runs with when told nothing.
func DefaultConfig() Config {
	return Config{
		Addr:            "127.0.0.1:19234",
		DataDir:         "./data",
		Pool:            "direct",
		Pcfg:            pool.Config{Capacity: pool.DefaultCapacity},
		CacheMiB:        1024,
		MaxBodyBytes:    1 << 20,
		MaxKeyBytes:     1 << 10,
		ReadTimeout:     10 * time.Second,
		WriteTimeout:    10 * time.Second,
		IdleTimeout:     60 * time.Second,
		MaxConns:        10000,
		ShutdownTimeout: 10 * time.Second,
	}
}

// Validate reports the first setting that cannot work, naming its flag.
func (c Config) Validate() error {
	switch {
	case c.Addr == "":
		return fmt.Errorf("-addr is empty")
	case c.DataDir == "":
		return fmt.Errorf("-data is empty")
	case c.MaxBodyBytes <= 0:
		return fmt.Errorf("-max-body must be positive, got %d", c.MaxBodyBytes)
	case c.MaxKeyBytes <= 0:
		return fmt.Errorf("-max-key must be positive, got %d", c.MaxKeyBytes)
	case c.CacheMiB <= 0:
		return fmt.Errorf("-cache-mb must be positive, got %d", c.CacheMiB)
	case c.MaxConns <= 0:
		return fmt.Errorf("-max-conns must be positive, got %d", c.MaxConns)
	}
	return nil
}

// LogAttrs lists the effective settings, for the one line kvserver logs at
// start.
func (c Config) LogAttrs() []any {
	workers := c.Pcfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return []any{
		"addr", c.Addr, "data", c.DataDir,
		"pool", c.Pool, "workers", workers, "cap", c.Pcfg.Capacity, "overflow", c.Pcfg.Overflow.String(),
		"queue_timeout", c.Pcfg.QueueTimeout,
		"sync", c.Sync, "cache_mb", c.CacheMiB, "max_body", c.MaxBodyBytes, "max_key", c.MaxKeyBytes,
		"read_timeout", c.ReadTimeout, "write_timeout", c.WriteTimeout, "idle_timeout", c.IdleTimeout,
		"max_conns", c.MaxConns, "shutdown_timeout", c.ShutdownTimeout,
		"mutex_profile_fraction", c.MutexProfileFraction, "block_profile_rate", c.BlockProfileRate,
	}
}
