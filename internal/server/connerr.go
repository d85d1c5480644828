package server

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kvpool/kvpool/internal/metrics"
)

// connErrorLog is fasthttp's Logger. fasthttp (v1.74) reports an error
// that ended a connection as Printf("error when serving connection
// %q<->%q: %v", local, remote, err); connErrorLog counts each by kind in
// kvserver_http_connection_errors_total and logs it:
//   - a client hanging up or the server stopping (the connection closed,
//     reset, a broken pipe, EOF) at debug level: Ctrl-C under load closes
//     every idle connection at once, and none of that is a problem;
//   - anything else as a warning, at most one line per connLogInterval,
//     which carries the number of lines suppressed since the previous one,
//     so a flood of bad clients cannot flood the log.
//
// fasthttp's other messages (accept errors, -max-conns reached) are logged
// as warnings as they come; fasthttp already limits the frequent ones.
type connErrorLog struct {
	log    *slog.Logger
	counts *metrics.ConnErrors
	now    func() time.Time // a clock tests can drive

	mu         sync.Mutex
	last       time.Time // when the last warning was logged
	suppressed int       // warnings not logged since then
}

// connLogInterval is the least time between two per-connection warnings.
const connLogInterval = time.Second

const connErrorFormat = "error when serving connection %q<->%q: %v"

func newConnErrorLog(log *slog.Logger, counts *metrics.ConnErrors) *connErrorLog {
	return &connErrorLog{log: log, counts: counts, now: time.Now}
}

// Printf implements fasthttp.Logger.
func (l *connErrorLog) Printf(format string, args ...any) {
	if format != connErrorFormat || len(args) != 3 {
		l.log.Warn(fmt.Sprintf(format, args...), "component", "fasthttp")
		return
	}
	local, remote := fmt.Sprint(args[0]), fmt.Sprint(args[1])
	err, ok := args[2].(error)
	if !ok {
		err = fmt.Errorf("%v", args[2])
	}
	l.connError(local, remote, err)
}

func (l *connErrorLog) connError(local, remote string, err error) {
	kind := connErrorKind(err)
	l.counts.Inc(kind)
	if kind != metrics.ConnOther {
		l.log.Debug("connection ended", "kind", kind, "remote", remote, "err", err)
		return
	}
	l.mu.Lock()
	now := l.now()
	if !l.last.IsZero() && now.Sub(l.last) < connLogInterval {
		l.suppressed++
		l.mu.Unlock()
		return
	}
	suppressed := l.suppressed
	l.last, l.suppressed = now, 0
	l.mu.Unlock()
	l.log.Warn("error serving a connection (at most one line a second; all are counted in kvserver_http_connection_errors_total)",
		"local", local, "remote", remote, "err", err, "suppressed", suppressed)
}

// connErrorKind sorts an error that ended a connection into one of the
// metrics.Conn* kinds. fasthttp wraps some errors without %w, so the
// error's text is checked where errors.Is cannot see the cause.
func connErrorKind(err error) string {
	msg := err.Error()
	switch {
	case errors.Is(err, net.ErrClosed) || strings.Contains(msg, "use of closed network connection"):
		return metrics.ConnClosed
	case errors.Is(err, syscall.ECONNRESET) || strings.Contains(msg, "connection reset by peer"):
		return metrics.ConnReset
	case errors.Is(err, syscall.EPIPE) || strings.Contains(msg, "broken pipe"):
		return metrics.ConnBrokenPipe
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || strings.HasSuffix(msg, "EOF"):
		return metrics.ConnEOF
	}
	return metrics.ConnOther
}
