package harness

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"syscall"
	"time"
)

// pollEvery is the pause between two readiness probes.
const pollEvery = 10 * time.Millisecond

// WaitReady polls GET url+"/v0/status" until it answers 200 or ctx ends;
// the error then says why ctx ended (context.Cause) and what the last
// probe got. Give ctx a deadline.
func WaitReady(ctx context.Context, url string) error {
	return pollReady(ctx, url, nil)
}

// pollReady is WaitReady that also gives up when exited is closed (a nil
// channel never is).
func pollReady(ctx context.Context, url string, exited <-chan struct{}) error {
	client := &http.Client{Timeout: time.Second}
	defer client.CloseIdleConnections()
	began := time.Now()
	ticker := time.NewTicker(pollEvery)
	defer ticker.Stop()
	var last string
	for {
		got := probe(ctx, client, url+"/v0/status")
		if got == "" {
			return nil
		}
		if last == "" || ctx.Err() == nil { // not the probe ctx cut short
			last = got
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("GET %s/v0/status: no 200 after %v (%v); last answer: %s", url, time.Since(began).Round(time.Millisecond), context.Cause(ctx), last)
		case <-exited:
			return fmt.Errorf("GET %s/v0/status: the server exited; last answer: %s", url, last)
		case <-ticker.C:
		}
	}
}

// probe GETs url once and returns "" for a 200, else what it got.
func probe(ctx context.Context, client *http.Client, url string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err.Error()
	}
	resp, err := client.Do(req)
	if err != nil {
		return err.Error()
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.Status
	}
	return ""
}

// ErrExited is the cause of a context from WatchProcess that ended
// because the process is gone.
var ErrExited = errors.New("the server's process exited")

// WatchProcess returns a context that ends when ctx does, when stop is
// called, or when process pid no longer exists (the shell that started it
// has reaped it); its cause then says so (ErrExited).
func WatchProcess(ctx context.Context, pid int) (_ context.Context, stop context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			p, err := os.FindProcess(pid)
			if err == nil {
				err = p.Signal(syscall.Signal(0)) // only asks whether it exists
				p.Release()
			}
			if errors.Is(err, os.ErrProcessDone) {
				cancel(fmt.Errorf("%w (pid %d)", ErrExited, pid))
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
