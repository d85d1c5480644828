// Package loadgen is the load lab's engine: open-model constant-rate load
// (or closed-loop, as fast as the connections go) against the kvserver's
// /v0/entity API, every latency recorded exactly, twice (from the actual
// send and from the scheduled send, the coordinated-omission correction),
// plus the searches and bulk loads built on it (Saturate, Fill).
//
// Two engines share one Config and one Result: "fast", this package's own
// pacer over raw keep-alive HTTP/1.1 connections, and "vegeta", vegeta's
// attacker (net/http), kept as an independent cross-check.
package loadgen

import (
	"fmt"
	"time"
)

// Engines (-engine).
const (
	EngineFast   = "fast"
	EngineVegeta = "vegeta"
)

// Transports of the fast engine (-transport).
const (
	// TransportRaw: one goroutine per TCP connection writing a prebuilt
	// request and parsing the response with fasthttp.Response. Cheapest.
	TransportRaw = "raw"
	// TransportHostClient: the same workers calling fasthttp.HostClient.Do,
	// which manages the connections itself. Kept to compare against.
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

	Workload Workload

	// Conns is the number of connections opened before the start.
	Conns int
	// MaxConns caps the connections the fast engine opens when every
	// connection is busy and requests fall behind schedule (open model).
	// MaxConns == Conns disables growth.
	MaxConns int

	// Rate is the constant request rate per second (open model). 0 means
	// closed loop: every connection sends its next request as soon as the
	// previous one is answered, as wrk does.
	Rate float64
	// Duration bounds the run: with Rate > 0 exactly Rate×Duration requests
	// are scheduled; with Rate == 0 sending stops at Duration. 0 = no bound
	// (then Requests must be set).
	Duration time.Duration
	// Requests bounds a closed-loop run by count (0 = no bound).
	Requests uint64
	// Timeout is the most a request may take before it counts as an error
	// and its connection is replaced. It also bounds how long a run waits
	// past Duration for late requests to be sent.
	Timeout time.Duration
	// Retries is how often a failed request is retried before it counts
	// as failed. For fill only: with Retries > 0 a request that still fails
	// ends its worker and becomes a candidate for Result.Resume.
	Retries int

	// Progress is the interval of progress lines (0 = none).
	Progress time.Duration
	// Seed makes key choices reproducible.
	Seed uint64
	// KeepResults keeps every request's result in memory for results.bin.
	KeepResults bool
	// Name labels the run in results.bin (vegeta's "attack" field).
	Name string

	// PacerMinSleep is the shortest wait the fast engine's pacer takes; it
	// trades pacer CPU against how closely sends follow the schedule.
	PacerMinSleep time.Duration
	// GrowAfter is how late the oldest due request must be, with every
	// connection busy, before the fast engine opens another connection.
	GrowAfter time.Duration

	Saturate SaturateConfig
	Fill     FillConfig
}

// SaturateConfig configures Saturate.
type SaturateConfig struct {
	SLO          time.Duration // corrected p99 must stay ≤ SLO
	MaxErrorRate float64       // share of errors (incl. 503) must stay < this
	StartRate    float64       // first step of the coarse ramp
	MaxRate      float64       // the ramp stops here
	Factor       float64       // the ramp multiplies the rate by this
	Step         time.Duration // length of each ramp and bisection step
	Precision    float64       // bisection stops when (hi-lo)/lo ≤ Precision
	ValidateFor  time.Duration // length of the validating run
	Cooldown     time.Duration // pause between steps for backlogs to drain
}

// FillConfig configures Fill: ids From..To inclusive.
type FillConfig struct {
	From, To uint64
}

// DefaultConfig returns the defaults cmd/loadtest documents.
func DefaultConfig() Config {
	return Config{
		Target:    "http://127.0.0.1:19234",
		Engine:    EngineFast,
		Transport: TransportRaw,
		Workload: Workload{
			ReadShare: 1,
			Keys:      2_000_000,
			Dist:      DistUniform,
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
		PacerMinSleep: 50 * time.Microsecond,
		GrowAfter:     10 * time.Millisecond,
		Saturate: SaturateConfig{
			SLO:          100 * time.Millisecond,
			MaxErrorRate: 0.001,
			StartRate:    1000,
			MaxRate:      1_000_000,
			Factor:       2,
			Step:         5 * time.Second,
			Precision:    0.05,
			ValidateFor:  30 * time.Second,
			Cooldown:     2 * time.Second,
		},
	}
}

// Validate reports the first setting that cannot work, saying which flag
// to change.
func (c *Config) Validate() error {
	if _, err := parseTarget(c.Target, c.AllowRemote); err != nil {
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
	case c.PacerMinSleep < 0 || c.GrowAfter <= 0:
		return fmt.Errorf("pacer settings must be positive")
	}
	return nil
}
