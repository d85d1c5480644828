package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kvpool/kvpool/internal/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logRecords is a slog.Handler that keeps what it is given.
type logRecords struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecords) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r.Clone())
	return nil
}
func (h *logRecords) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logRecords) WithGroup(string) slog.Handler      { return h }

// at returns the records logged at level.
func (h *logRecords) at(level slog.Level) []slog.Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []slog.Record
	for _, r := range h.records {
		if r.Level == level {
			out = append(out, r)
		}
	}
	return out
}

func attr(r slog.Record, key string) slog.Value {
	var v slog.Value
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value
			return false
		}
		return true
	})
	return v
}

// fasthttpConnError calls l as fasthttp's worker pool does when a
// connection ends with err.
func fasthttpConnError(l *connErrorLog, err error) {
	l.Printf("error when serving connection %q<->%q: %v",
		&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 19234}, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}, err)
}

func TestConnErrorKind(t *testing.T) {
	f := func(err error, want string) {
		t.Helper()
		assert.Equal(t, want, connErrorKind(err), "%v", err)
	}
	f(&net.OpError{Op: "read", Net: "tcp", Err: net.ErrClosed}, metrics.ConnClosed)
	f(fmt.Errorf("set tcp 127.0.0.1:1: use of closed network connection"), metrics.ConnClosed)
	f(&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, metrics.ConnReset)
	f(fmt.Errorf("write tcp: %w", syscall.EPIPE), metrics.ConnBrokenPipe)
	f(io.EOF, metrics.ConnEOF)
	f(fmt.Errorf("error when reading request headers: %v", io.ErrUnexpectedEOF), metrics.ConnEOF) // wrapped without %w
	f(errors.New("error when reading request headers: invalid header key"), metrics.ConnOther)
}

// TestConnErrorLog: errors of a client hanging up or of the server
// stopping are debug lines; any other is a warning, at most one per
// second with the count suppressed since the last one; all are counted.
// The clock is the test's.
func TestConnErrorLog(t *testing.T) {
	records := &logRecords{}
	reg := prometheus.NewRegistry()
	l := newConnErrorLog(slog.New(records), metrics.NewConnErrors(reg))
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return now }

	for range 49 { // Ctrl-C under load: every idle connection closed at once
		fasthttpConnError(l, &net.OpError{Op: "read", Net: "tcp", Err: net.ErrClosed})
	}
	fasthttpConnError(l, fmt.Errorf("write: %w", syscall.EPIPE))
	assert.Empty(t, records.at(slog.LevelWarn), "hang-ups and shutdown are not warnings")
	assert.Len(t, records.at(slog.LevelDebug), 50)

	bad := errors.New("error when reading request headers: invalid header key")
	fasthttpConnError(l, bad) // logged
	now = now.Add(300 * time.Millisecond)
	fasthttpConnError(l, bad) // suppressed
	now = now.Add(600 * time.Millisecond)
	fasthttpConnError(l, bad) // suppressed: 0.9 s since the line
	require.Len(t, records.at(slog.LevelWarn), 1)
	assert.Equal(t, int64(0), attr(records.at(slog.LevelWarn)[0], "suppressed").Int64())

	now = now.Add(100 * time.Millisecond) // a second since the line
	fasthttpConnError(l, bad)
	warns := records.at(slog.LevelWarn)
	require.Len(t, warns, 2)
	assert.Equal(t, int64(2), attr(warns[1], "suppressed").Int64())
	assert.Equal(t, "127.0.0.1:40000", attr(warns[1], "remote").String())

	want := map[string]float64{metrics.ConnClosed: 49, metrics.ConnBrokenPipe: 1, metrics.ConnOther: 4}
	n, err := testutil.GatherAndCount(reg, "kvserver_http_connection_errors_total")
	require.NoError(t, err)
	require.Equal(t, len(metrics.ConnErrorKinds), n)
	for _, kind := range metrics.ConnErrorKinds {
		assert.Equal(t, want[kind], gatherCounter(t, reg, "kvserver_http_connection_errors_total", "kind", kind), kind)
	}

	// fasthttp's other messages pass through as warnings.
	l.Printf("Permanent error when accepting new connections: %v", errors.New("accept: too many open files"))
	assert.Contains(t, records.at(slog.LevelWarn)[2].Message, "too many open files")
}

// gatherCounter is the value of the counter name{label=value} in reg.
func gatherCounter(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no series %s{%s=%q}", name, label, value)
	return 0
}

// TestConnErrorCountedEndToEnd: fasthttp's real report of a connection
// ending in a malformed request reaches the counter, so the format
// connErrorLog recognises is the one fasthttp uses. fasthttp reports the
// error before it closes the connection, so the close is the event that
// says it has been counted.
func TestConnErrorCountedEndToEnd(t *testing.T) {
	ts := start(t, testConfig(t, "fifo"))
	c := ts.dial()
	c.send("GET /v0/status HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n")
	assert.Equal(t, 400, statusOf(c.closedByServer(5*time.Second)))
	_, body, _ := ts.do("GET", "/metrics", nil)
	assert.Equal(t, 1.0, metricValue(t, string(body), `kvserver_http_connection_errors_total{kind="other"}`))
}
