package client

import "time"

// Window is the span the retry budget and the throttle count over. The
// SRE book's adaptive throttling uses two minutes and Finagle's
// RetryBudget a TTL of 10 s; the lab's runs last about a minute, so a
// two-minute window would never forget the run's start (a throttle
// opened by a spike would stay shut for the rest of the run), and 10 s
// lets a client recover within a run while still smoothing over many
// intervals. Both use the same window.
const Window = buckets * Bucket

// Bucket is the window's granularity: counts older than Window are
// dropped a Bucket at a time, so the window spans between Window−Bucket
// and Window of history.
const Bucket = 100 * time.Millisecond

// buckets is how many Buckets make up Window.
const buckets = 100

// counts is what one bucket (and the window's sum) holds.
type counts struct {
	firsts   int64 // first tries asked of Send (budget's base)
	retries  int64 // retries granted by Done (budget's spending)
	requests int64 // attempts asked of Send, refused ones included (throttle)
	accepts  int64 // attempts answered other than 503 (throttle)
}

func (a *counts) sub(b *counts) {
	a.firsts -= b.firsts
	a.retries -= b.retries
	a.requests -= b.requests
	a.accepts -= b.accepts
}

// window is a sliding sum over the last buckets Buckets: a ring indexed
// by bucket number (now / Bucket), with the running sum kept so that a
// read costs nothing. It is an array, not a slice: a Client is one
// allocation and copying a window copies its state (tests rely on it).
type window struct {
	ring    [buckets]counts
	sum     counts
	head    int64 // bucket number of the newest bucket
	started bool
}

// at moves the window to now and returns the bucket now falls in. A now
// before the newest bucket (the caller's clock is monotonic, but
// attempts may be reported slightly out of order) counts in the newest.
func (w *window) at(now int64) *counts {
	n := floorDiv(now, int64(Bucket))
	switch {
	case !w.started:
		w.started, w.head = true, n
	case n > w.head:
		if n-w.head >= buckets {
			w.ring, w.sum = [buckets]counts{}, counts{}
		} else {
			for i := w.head + 1; i <= n; i++ {
				b := &w.ring[floorMod(i, buckets)]
				w.sum.sub(b)
				*b = counts{}
			}
		}
		w.head = n
	}
	return &w.ring[floorMod(w.head, buckets)]
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}
