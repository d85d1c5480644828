// Package mono is the one clock the server, its pools and its store read
// when they judge a request's deadline: the monotonic clock, as
// nanoseconds since the process started, in an int64. A deadline set by
// the HTTP handler is then compared by the pool and the store on the same
// scale, a wall-clock jump moves none of them, and an int64 is cheaper to
// keep in a queue slot and to compare than a time.Time.
//
// A deadline on this clock is a Now() value; 0 stands for "none" (the
// process's first nanosecond is never a real one).
package mono

import "time"

// epoch anchors Now: time.Since reads the monotonic clock.
var epoch = time.Now()

// Now returns monotonic nanoseconds since the process started.
func Now() int64 { return int64(time.Since(epoch)) }

// Of returns t on this clock. t must carry a monotonic reading (time.Now
// does, and so does fasthttp's RequestCtx.Time), or the wall clock is used
// to place it.
func Of(t time.Time) int64 { return int64(t.Sub(epoch)) }

// Passed reports whether deadline is set (not 0) and now is past it.
func Passed(deadline, now int64) bool { return deadline != 0 && now > deadline }

// Clock is a source of time on this clock's scale that a test can replace,
// so that waits, timeouts and deadlines see the times the test sets rather
// than how fast goroutines happen to run (monotest.Clock is such a one).
// Code that takes one reads Now and the runtime's timers when given none.
type Clock interface {
	// Now returns nanoseconds on this package's scale, like Now().
	Now() int64
	// Timer returns a channel that receives once d has passed on the
	// clock (at once for d <= 0), and a func that releases the timer.
	Timer(d time.Duration) (<-chan time.Time, func())
}

// System is the real Clock: Now and the runtime's timers.
var System Clock = system{}

type system struct{}

func (system) Now() int64 { return Now() }

func (system) Timer(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}
