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
		MaxHeaderBytes:  8 << 10,
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
	case c.MaxHeaderBytes < minHeaderBytes(c.MaxKeyBytes):
		return fmt.Errorf("-max-header %d cannot hold a request whose id is -max-key %d bytes percent-encoded; want at least %d",
			c.MaxHeaderBytes, c.MaxKeyBytes, minHeaderBytes(c.MaxKeyBytes))
	case c.MaxConns <= 0:
		return fmt.Errorf("-max-conns must be positive, got %d", c.MaxConns)
	case c.MaxConnsPerIP < 0:
		return fmt.Errorf("-max-conns-per-ip must be 0 (no limit) or positive, got %d", c.MaxConnsPerIP)
	case c.ReadTimeout < 0 || c.WriteTimeout < 0 || c.IdleTimeout < 0 || c.ShutdownTimeout < 0:
		return fmt.Errorf("timeouts must not be negative (0 means none)")
	}
	return nil
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
		"sync", c.Sync, "cache_mb", c.CacheMiB,
		"max_body", c.MaxBodyBytes, "max_key", c.MaxKeyBytes, "max_header", c.MaxHeaderBytes,
		"read_timeout", c.ReadTimeout, "write_timeout", c.WriteTimeout, "idle_timeout", c.IdleTimeout,
		"max_conns", c.MaxConns, "max_conns_per_ip", c.MaxConnsPerIP, "shutdown_timeout", c.ShutdownTimeout,
		"mutex_profile_fraction", c.MutexProfileFraction, "block_profile_rate", c.BlockProfileRate,
	}
}
