// Command kvserver serves the /v0 key-value API: fasthttp in front, a
// switchable worker pool in the middle, Pebble underneath.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/kvpool/kvpool/internal/server"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	cfg, level, err := parseConfig(args, os.Getenv)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kvserver:", err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(log)
	log.Info("kvserver config", cfg.LogAttrs()...)

	srv, err := server.Open(cfg, log)
	if err != nil {
		log.Error("cannot start", "err", err)
		return 1
	}
	ln, err := srv.Listen()
	if err != nil {
		log.Error("cannot start", "err", err)
		srv.Shutdown(context.Background())
		return 1
	}

	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("serving", "addr", ln.Addr().String(), "pool", cfg.Pool, "data", cfg.DataDir)

	select {
	case err := <-served:
		log.Error("server stopped", "err", err)
		srv.Shutdown(context.Background())
		return 1
	case sig := <-signals:
		log.Info("stopping: draining requests in flight; a second signal exits at once", "signal", sig.String(), "timeout", cfg.ShutdownTimeout)
	}
	go func() {
		sig := <-signals
		log.Warn("second signal: exiting without draining", "signal", sig.String())
		os.Exit(1)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		log.Error("unclean stop", "err", err)
		return 1
	}
	log.Info("stopped cleanly")
	return 0
}
