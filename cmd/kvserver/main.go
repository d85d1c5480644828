// Command kvserver serves the /v0 key-value API: fasthttp in front, a
// switchable worker pool in the middle, Pebble underneath.
//
// Every error is one slog line at level ERROR on stderr. Exit status: 0
// after a clean stop, 2 for a bad configuration (a flag or KVPOOL_*
// value), 1 for a failed start (port busy, store locked, ...) or a stop
// that was not clean.
package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/kvpool/kvpool/internal/server"
	"github.com/kvpool/kvpool/internal/store"
)

// Exit statuses.
const (
	exitClean     = 0
	exitFailed    = 1 // a failed start, or a stop that was not clean
	exitBadConfig = 2
)

func main() {
	// Signals are caught from the start: one that lands while kvserver is
	// still starting stops it as soon as it serves, instead of killing it
	// half-started.
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	os.Exit(run(os.Args[1:], os.Getenv, os.Stderr, signals))
}

// run is kvserver from its arguments to its exit status: it logs to
// stderr and stops gracefully at the first value on signals.
func run(args []string, getenv func(string) string, stderr io.Writer, signals <-chan os.Signal) int {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	cfg, err := parseConfig(args, getenv)
	if errors.Is(err, flag.ErrHelp) {
		return exitClean
	}
	if err != nil {
		log.Error("bad configuration", "err", err)
		return exitBadConfig
	}
	log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	slog.SetDefault(log)
	log.Info("kvserver config", cfg.LogAttrs()...)
	if cfg.PprofRemote {
		log.Warn("/debug/pprof is served to every client (-pprof-remote): anyone who can reach -addr can read memory and the command line")
	} else {
		log.Info("/debug/pprof is served to loopback clients only; -pprof-remote serves it to others")
	}
	// Process-wide, so set here rather than by the server.
	runtime.SetMutexProfileFraction(cfg.MutexProfileFraction)
	runtime.SetBlockProfileRate(cfg.BlockProfileRate)

	// Listen first: a start that fails on a busy port creates nothing.
	ln, err := server.Listen(cfg.Addr)
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitFailed
	}
	st, err := store.Open(cfg.StoreOptions(log))
	if err != nil {
		ln.Close()
		log.Error("cannot start", "err", err)
		return exitFailed
	}
	// The server puts the stand-in for a remote store (-io-delay,
	// -io-concurrency) in front of st itself.
	srv, err := server.New(cfg, st, server.Options{Log: log, PebbleMetrics: st.Metrics, PebbleFlushes: st.FlushEvents()})
	if err != nil {
		ln.Close()
		st.Close()
		log.Error("cannot start", "err", err)
		return exitFailed
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("serving", "addr", ln.Addr().String(), "pool", cfg.Pool, "data", cfg.DataDir)

	select {
	case err := <-served: // only an accept error ends Serve before Shutdown
		log.Error("server stopped", "err", err)
		ctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
		defer cancel()
		srv.Shutdown(ctx)
		st.Close()
		return exitFailed
	case sig := <-signals:
		log.Info("stopping: draining requests in flight; a second signal exits at once", "signal", sig.String(), "timeout", cfg.ShutdownTimeout)
	}
	stopped := make(chan struct{})
	defer close(stopped)
	go func() {
		select {
		case sig := <-signals:
			log.Error("second signal: exiting without draining", "signal", sig.String())
			os.Exit(exitFailed)
		case <-stopped:
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	err = errors.Join(srv.Shutdown(ctx), <-served, st.Close())
	if err != nil {
		log.Error("unclean stop", "err", err)
		return exitFailed
	}
	log.Info("stopped cleanly")
	return exitClean
}
