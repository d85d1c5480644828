package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/kvpool/kvpool/internal/harness"
)

// runWait returns once the server at -url answers GET /v0/status with 200
// (kvserver once its store is open; the bare server at once): the load
// lab's scripts start a server in the background and wait with it.
func runWait(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("loadtest wait", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "http://127.0.0.1:19234", "server base URL")
	timeout := fs.Duration("timeout", 10*time.Second, "give up after this long")
	pid := fs.Int("pid", 0, "give up at once if this process (the server just started) exits; 0: do not watch")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *timeout <= 0 {
		return fmt.Errorf("-timeout %v: want a positive duration", *timeout)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if *pid > 0 {
		var stop context.CancelFunc
		ctx, stop = harness.WatchProcess(ctx, *pid)
		defer stop()
	}
	return harness.WaitReady(ctx, *url)
}
