package engine

import (
	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/loadgen/record"
)

// attempt is one try of a request, to be sent at at (ns since the
// start): the run's seq, and for a retry (n > 0) the key and operation of
// its first try, so that a retried PUT writes the same value again (the
// workload's value is a function of the key).
type attempt struct {
	at  int64
	seq uint64
	key uint64
	op  api.Method
	n   uint8
}

// outcome is the record of a, not yet sent, marked with flags.
func (a attempt) outcome(flags uint8) record.Outcome {
	return record.Outcome{Seq: a.seq, Key: a.key, Op: a.op, Intended: a.at, Attempt: a.n, Flags: flags}
}

// retryQueue holds an event loop's retries until their backoff has
// passed: a binary min-heap by at, written out for the one element type
// so that pushing a retry allocates nothing once the heap has grown.
type retryQueue struct{ h []attempt }

func (q *retryQueue) len() int { return len(q.h) }

// top is the retry due first; only when len() > 0.
func (q *retryQueue) top() *attempt { return &q.h[0] }

func (q *retryQueue) push(a attempt) {
	q.h = append(q.h, a)
	for i := len(q.h) - 1; i > 0; {
		p := (i - 1) / 2
		if q.h[p].at <= q.h[i].at {
			break
		}
		q.h[p], q.h[i] = q.h[i], q.h[p]
		i = p
	}
}

func (q *retryQueue) pop() attempt {
	a := q.h[0]
	last := len(q.h) - 1
	q.h[0] = q.h[last]
	q.h = q.h[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < last && q.h[l].at < q.h[m].at {
			m = l
		}
		if r < last && q.h[r].at < q.h[m].at {
			m = r
		}
		if m == i {
			break
		}
		q.h[i], q.h[m] = q.h[m], q.h[i]
		i = m
	}
	return a
}
