package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/kvpool/kvpool/internal/harness"
)

// drainWait bounds each wait of the drain check; kvserver's own
// -shutdown-timeout (10s) is the longest a clean stop may take.
const drainWait = 15 * time.Second

// inflight is a PUT on its own connection, sent in two halves so that it
// can be in flight across the SIGTERM.
type inflight struct {
	key  string
	conn net.Conn
	rest []byte
}

// startInflight sends a PUT's headers and the first half of its body on a
// new connection: once the server has read a byte of it, a graceful stop
// waits for it.
func startInflight(addr, key string) (*inflight, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	v := valueOf(key)
	half := len(v) / 2
	_, err = fmt.Fprintf(conn, "PUT /v0/entity?id=%s HTTP/1.1\r\nHost: crashtest\r\nContent-Length: %d\r\n\r\n%s", key, len(v), v[:half])
	if err != nil {
		conn.Close()
		return nil, err
	}
	return &inflight{key: key, conn: conn, rest: v[half:]}, nil
}

// finish sends the rest of the body and returns the answer's status and
// whether it announced that the connection closes.
func (f *inflight) finish() (code int, closing bool, err error) {
	defer f.conn.Close()
	f.conn.SetDeadline(time.Now().Add(drainWait))
	if _, err := f.conn.Write(f.rest); err != nil {
		return 0, false, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(f.conn), nil)
	if err != nil {
		return 0, false, err
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Close, nil
}

// refusedWithin dials addr until a connection is refused, for at most wait,
// and returns how long that took.
func refusedWithin(addr string, wait time.Duration) (time.Duration, bool) {
	began := time.Now()
	for time.Since(began) < wait {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if errors.Is(err, syscall.ECONNREFUSED) {
			return time.Since(began), true
		}
		if err == nil {
			c.Close()
		}
		time.Sleep(5 * time.Millisecond)
	}
	return wait, false
}

// waitExit waits up to wait for srv to exit and returns its exit code; on
// timeout it kills it and says so.
func waitExit(srv *harness.Server, wait time.Duration) (int, error) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-srv.Exited():
		return srv.ExitCode(), nil
	case <-timer.C:
		srv.Kill()
		return -1, fmt.Errorf("kvserver still running %v after SIGTERM; killed it", wait)
	}
}

// closedWithin reads c until the server closes it, for at most wait, and
// returns how long that took.
func closedWithin(c net.Conn, wait time.Duration) (time.Duration, bool) {
	began := time.Now()
	c.SetReadDeadline(began.Add(wait))
	_, err := io.Copy(io.Discard, c)
	var netErr net.Error
	return time.Since(began), !errors.As(err, &netErr) || !netErr.Timeout()
}

// runDrain stops the server with SIGTERM while writers are busy and one
// request is in flight, and checks the graceful stop's promises.
func runDrain(ctx context.Context, cfg config, out io.Writer) (passed bool, err error) {
	s, err := newSession(cfg, "drain", out)
	if err != nil {
		return false, err
	}
	defer func() { s.close(passed && err == nil) }()
	fmt.Fprintf(out, "drain: kvserver -sync=%t -pool %s, %d writers, SIGTERM %v..%v after they start, one PUT in flight (seed %d)\n",
		cfg.sync, cfg.pool, cfg.writers, cfg.minRun, cfg.maxRun, cfg.seed)
	if err := s.start(ctx); err != nil {
		return false, err
	}
	client := newClient(cfg.writers)
	wctx, stopWriters := context.WithCancel(ctx)
	defer stopWriters()
	done := make(chan writeLog, 1)
	go func() { done <- writeUntil(wctx, client, s.srv.URL, "drain", 0, cfg.writers) }()
	sleepCtx(ctx, s.runFor())

	f, err := startInflight(s.srv.Addr, "drain-inflight")
	if err != nil {
		return false, err
	}
	// A connection that never sends anything must not hold the stop: this
	// kvserver's -read-timeout is longer than its -shutdown-timeout.
	silent, err := net.DialTimeout("tcp", s.srv.Addr, 5*time.Second)
	if err != nil {
		return false, err
	}
	defer silent.Close()
	// The signal must find the PUT begun (the server has read what was
	// sent of it: its stop then waits for it) and the silent connection
	// accepted (its stop closes it, rather than the kernel's backlog).
	if err := waitConn(ctx, f.conn, drainWait, "the server reads the PUT's first half", tcpState.served); err != nil {
		return false, err
	}
	if err := waitConn(ctx, silent, drainWait, "the server accepts a silent connection", func(st tcpState) bool { return st.found && st.accepted }); err != nil {
		return false, err
	}
	signalled := time.Now()
	if err := s.srv.Signal(syscall.SIGTERM); err != nil {
		return false, err
	}
	refusedAfter, refused := refusedWithin(s.srv.Addr, 5*time.Second)
	silentClosedAfter, silentClosed := closedWithin(silent, 5*time.Second)
	silentClosedAfter += refusedAfter
	code, closing, ferr := f.finish()
	exit, werr := waitExit(s.srv, drainWait)
	stopped := time.Since(signalled)
	stopWriters()
	wl := <-done
	client.CloseIdleConnections()
	cleanly := slices.ContainsFunc(s.srv.LogLines(1000), func(l string) bool { return strings.Contains(l, "stopped cleanly") })

	check := func(ok bool, what string, args ...any) {
		mark := "ok  "
		if !ok {
			mark, passed = "FAIL", false
		}
		fmt.Fprintf(out, "  %s %s\n", mark, fmt.Sprintf(what, args...))
	}
	passed = true
	check(ferr == nil && code == 201, "the PUT in flight at SIGTERM was answered %d (err %v), want 201", code, ferr)
	check(closing, "its answer said Connection: close")
	check(refused, "new connections refused %v after SIGTERM", refusedAfter.Round(time.Millisecond))
	check(silentClosed, "a connection that never sent a byte: closed by the server=%t, %v after SIGTERM (want at once)", silentClosed, silentClosedAfter.Round(time.Millisecond))
	check(werr == nil && exit == 0, "kvserver exited %d %v after SIGTERM (err %v), want 0", exit, stopped.Round(time.Millisecond), werr)
	check(cleanly, `its log says "stopped cleanly" (Pebble closed)`)

	if err := s.start(ctx); err != nil {
		return false, err
	}
	keys := wl.acked
	if code == 201 {
		keys = append(keys, f.key)
	}
	rclient := newClient(cfg.writers)
	defer rclient.CloseIdleConnections()
	back, err := verify(ctx, rclient, s.srv.URL, keys, cfg.writers)
	if err != nil {
		return false, err
	}
	doubt, err := verify(ctx, rclient, s.srv.URL, wl.inDoubt, cfg.writers)
	if err != nil {
		return false, err
	}
	check(len(wl.acked) > 0, "writers: %d acknowledged, %d failed unanswered (cut off or refused by the stop), answers %v", len(wl.acked), len(wl.inDoubt), wl.byCode)
	check(len(back.missing) == 0 && len(back.wrong) == 0, "after a restart: %d of %d acknowledged writes read back exactly, %d lost, %d wrong",
		back.exact, back.checked, len(back.missing), len(back.wrong))
	check(len(doubt.wrong) == 0, "of the unanswered writes %d were stored, %d wrong", doubt.exact, len(doubt.wrong))
	err = s.srv.Stop(drainWait)
	check(err == nil, "the restarted kvserver stopped with exit %d (err %v)", s.srv.ExitCode(), err)
	return passed, nil
}
