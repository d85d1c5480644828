package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/kvpool/kvpool/internal/loadgen/bareserver"
)

func runBareServer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("loadtest bare-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:19235", "loopback address to listen on (port 0 picks one)")
	serviceTime := fs.Duration("service-time", 0, "mean of an exponentially distributed sleep before each answer (0: answer at once)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ln, err := bareserver.Listen(*addr)
	if err != nil {
		return err
	}
	srv := bareserver.New(*serviceTime)
	// Bounded: fasthttp waits for open connections, and a loader's idle
	// keep-alive connection may stay open for as long as the loader runs.
	stop := context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.ShutdownWithContext(sctx)
	})
	defer stop()
	// The address line is what scripts wait for.
	fmt.Fprintf(stdout, "bare-server listening on http://%s\n", ln.Addr())
	if err := srv.Serve(ln); err != nil {
		return fmt.Errorf("bare server stopped: %w", err)
	}
	return nil
}
