package main

import (
	"flag"
	"fmt"
	"log/slog"
	"strings"

	"github.com/kvpool/kvpool/internal/pool"
	"github.com/kvpool/kvpool/internal/server"
)

// envPrefix: each flag -some-name falls back to $KVPOOL_SOME_NAME.
const envPrefix = "KVPOOL_"

func envName(flagName string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// overflowFlag parses -overflow into a pool.Overflow.
type overflowFlag struct{ o *pool.Overflow }

func (f overflowFlag) String() string {
	if f.o == nil {
		return ""
	}
	return f.o.String()
}

func (f overflowFlag) Set(s string) error {
	o, err := pool.ParseOverflow(s)
	if err == nil {
		*f.o = o
	}
	return err
}

// parseConfig fills a server.Config from args, then, for every flag not
// given on the command line, from its KVPOOL_* variable. Env values go
// through the same parser as flags, so both fail the same way.
func parseConfig(args []string, getenv func(string) string) (server.Config, slog.Level, error) {
	c := server.DefaultConfig()
	level := slog.LevelInfo
	fs := flag.NewFlagSet("kvserver", flag.ContinueOnError)
	fs.StringVar(&c.Addr, "addr", c.Addr, "listen address")
	fs.StringVar(&c.DataDir, "data", c.DataDir, "Pebble data directory (created if missing)")
	fs.StringVar(&c.Pool, "pool", c.Pool, "worker pool: "+strings.Join(pool.Variants, "|"))
	fs.IntVar(&c.Pcfg.Workers, "workers", 0, "pool workers (0: GOMAXPROCS)")
	fs.IntVar(&c.Pcfg.Capacity, "cap", c.Pcfg.Capacity, "queue bound (0: direct hand-off, -1: unbounded where supported)")
	fs.Var(overflowFlag{&c.Pcfg.Overflow}, "overflow", "full-queue policy: reject|drop-oldest|caller-runs|block")
	fs.DurationVar(&c.Pcfg.QueueTimeout, "queue-timeout", 0, "answer 503 for a job that waited longer than this (0: no limit)")
	fs.IntVar(&c.Pcfg.ShardsPerWorker, "shards-per-worker", 2, "multiqueue shards per worker")
	fs.DurationVar(&c.Pcfg.CoDelTarget, "codel-target", 0, "adaptive: acceptable standing queue delay (0: 5ms)")
	fs.DurationVar(&c.Pcfg.CoDelInterval, "codel-interval", 0, "adaptive: CoDel interval (0: 100ms)")
	fs.BoolVar(&c.Sync, "sync", c.Sync, "fsync the WAL before acknowledging each write")
	fs.IntVar(&c.CacheMiB, "cache-mb", c.CacheMiB, "Pebble block cache, MiB")
	fs.IntVar(&c.MaxBodyBytes, "max-body", c.MaxBodyBytes, "largest request body, bytes (413 above)")
	fs.IntVar(&c.MaxKeyBytes, "max-key", c.MaxKeyBytes, "longest id, bytes (400 above)")
	fs.IntVar(&c.MaxHeaderBytes, "max-header", c.MaxHeaderBytes, "largest request line plus headers, bytes (431 above)")
	fs.DurationVar(&c.ReadTimeout, "read-timeout", c.ReadTimeout, "time to read one request")
	fs.DurationVar(&c.WriteTimeout, "write-timeout", c.WriteTimeout, "time to write one response")
	fs.DurationVar(&c.IdleTimeout, "idle-timeout", c.IdleTimeout, "keep-alive connection idle limit")
	fs.IntVar(&c.MaxConns, "max-conns", c.MaxConns, "connections served at once (one more is answered 503 and closed)")
	fs.IntVar(&c.MaxConnsPerIP, "max-conns-per-ip", c.MaxConnsPerIP, "connections from one client IP (429 above; 0: no limit)")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", c.ShutdownTimeout, "graceful stop: wait this long for requests in flight")
	fs.IntVar(&c.MutexProfileFraction, "mutex-profile-fraction", 0, "report 1/n mutex contention events to pprof (0: off)")
	fs.IntVar(&c.BlockProfileRate, "block-profile-rate", 0, "sample blocking events of n ns (0: off)")
	fs.TextVar(&level, "log-level", level, "debug|info|warn|error")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: kvserver [flags]\nEvery flag -name falls back to $%sNAME (dashes as underscores).\n\n", envPrefix)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return c, level, err
	}
	if fs.NArg() > 0 {
		return c, level, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if v := getenv(envName(f.Name)); v != "" && !given[f.Name] && err == nil {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("$%s=%q: %w", envName(f.Name), v, e)
			}
		}
	})
	if err != nil {
		return c, level, err
	}
	return c, level, c.Validate()
}
