package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"syscall"
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
		ctx, stop = watchProcess(ctx, *pid)
		defer stop()
	}
	return harness.WaitReady(ctx, *url)
}

// errExited is the cause of a wait that stopped because the server's
// process is gone.
var errExited = errors.New("the server's process exited")

// watchProcess returns a context that ends when ctx does, when stop is
// called, or when process pid no longer exists (the shell that started it
// has reaped it); its cause then says so.
func watchProcess(ctx context.Context, pid int) (_ context.Context, stop context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
				cancel(fmt.Errorf("%w (pid %d)", errExited, pid))
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}
