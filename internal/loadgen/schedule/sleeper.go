package schedule

import "time"

// A Sleeper blocks the calling goroutine for d. The pacer needs sub-
// millisecond waits; time.Sleep cannot give them on Linux when the process
// is otherwise idle (the runtime's netpoller waits in whole milliseconds,
// so a 50 µs sleep takes about 1.1 ms), which would release requests in
// 1 ms bursts and add up to 1 ms of loader-made delay to corrected
// latencies. NewSleeper returns the most precise sleeper the platform has.
type Sleeper interface {
	Sleep(d time.Duration)
	Close() error
}

// coarseSleeper is time.Sleep: the fallback where nothing better exists.
type coarseSleeper struct{}

func (coarseSleeper) Sleep(d time.Duration) { time.Sleep(d) }
func (coarseSleeper) Close() error          { return nil }
