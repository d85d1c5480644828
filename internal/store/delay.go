package store

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// DelayDist is how WithDelay draws each operation's delay.
type DelayDist string

const (
	// DelayFixed sleeps the same duration before every operation.
	DelayFixed DelayDist = "fixed"
	// DelayExp sleeps an exponentially distributed duration with the given
	// mean: memoryless, like the response time of a remote service that
	// is mostly quick with a long tail.
	DelayExp DelayDist = "exp"
)

// DelayDists lists the distributions ParseDelayDist accepts.
var DelayDists = []DelayDist{DelayFixed, DelayExp}

// ParseDelayDist parses a distribution name as -io-delay-dist takes it.
func ParseDelayDist(s string) (DelayDist, error) {
	for _, d := range DelayDists {
		if s == string(d) {
			return d, nil
		}
	}
	return "", fmt.Errorf("unknown delay distribution %q; want one of %v", s, DelayDists)
}

// WithDelay returns s with every Get, Put and Delete first sleeping d
// (DelayFixed) or an exponentially distributed time of mean d (DelayExp):
// a stand-in for a store behind a network call, where a worker pool
// differs from running the call in the request handler. d <= 0 returns s
// itself, so a server without a delay pays nothing for the option.
//
// The sleep is time.Sleep, whose resolution is the Go runtime timer's: on
// Linux a sleep shorter than about a millisecond, on an otherwise idle
// runtime, may last about a millisecond, so delays below that are floors
// rather than exact values. Close is not delayed.
func WithDelay(s Store, d time.Duration, dist DelayDist) Store {
	if d <= 0 {
		return s
	}
	return &delayed{Store: s, delay: delayFunc(d, dist), sleep: time.Sleep}
}

// delayFunc returns the draw for dist with mean d; an unknown dist is
// DelayFixed (config validation refuses it before it gets here).
func delayFunc(d time.Duration, dist DelayDist) func() time.Duration {
	if dist == DelayExp {
		// rand/v2's top-level functions are safe for concurrent use and
		// take no lock: each call draws from a per-thread source.
		return func() time.Duration { return time.Duration(rand.ExpFloat64() * float64(d)) }
	}
	return func() time.Duration { return d }
}

// delayed is the Store WithDelay returns.
type delayed struct {
	Store
	delay func() time.Duration
	sleep func(time.Duration) // time.Sleep; tests record instead
}

// Get implements Store. The delay stands for a call already on the wire,
// so it is slept whole, whatever the deadline.
func (s *delayed) Get(deadline int64, dst, key []byte) ([]byte, error) {
	s.sleep(s.delay())
	return s.Store.Get(deadline, dst, key)
}

// Put implements Store.
func (s *delayed) Put(deadline int64, key, value []byte) error {
	s.sleep(s.delay())
	return s.Store.Put(deadline, key, value)
}

// Delete implements Store.
func (s *delayed) Delete(deadline int64, key []byte) error {
	s.sleep(s.delay())
	return s.Store.Delete(deadline, key)
}
