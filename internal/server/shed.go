package server

import (
	"strconv"
	"time"

	"github.com/kvpool/kvpool/internal/pool"
	"github.com/valyala/fasthttp"
)

// A 503 is built from these, made once: under overload the refusal is the
// most frequent answer, and whatever it costs comes out of the CPU that
// serves the requests admitted. Nothing
// here allocates or formats per request; SetBodyRaw points the response at
// the shared body, which no one writes to. X-Shed-Reason is the pool's
// Reason: full, dropped, expired, closed, deadline (the request's own
// deadline passed before its store operation began, in the pool or
// waiting for the store's capacity), abandoned (its client closed the
// connection while it waited), retry (a retry refused while the queue
// still took first tries) or io (a write the store could not absorb in
// time: see pool.Pacer).
var (
	retryAfterKey    = []byte("Retry-After")
	retryAfterValues [maxRetryAfter + 1][]byte
	shedReasonKey    = []byte("X-Shed-Reason")
	textPlain        = []byte("text/plain; charset=utf-8")
	shedReasons      [pool.NumReasons][]byte
	shedBodies       [pool.NumReasons][]byte
)

// maxRetryAfter caps Retry-After, in seconds: a queue that would take
// longer to drain is one a client should not wait on at all.
const maxRetryAfter = 60

func init() {
	for i := range retryAfterValues {
		retryAfterValues[i] = []byte(strconv.Itoa(i))
	}
	for r := range pool.NumReasons {
		name := pool.Reason(r).String()
		shedReasons[r] = []byte(name)
		shedBodies[r] = []byte("overloaded (" + name + "); retry later")
	}
}

// shed answers a request the pool refused, j, with 503, Retry-After and
// X-Shed-Reason (j.reason).
func (s *Server) shed(ctx *fasthttp.RequestCtx, j *job) {
	h := &ctx.Response.Header
	h.SetStatusCode(fasthttp.StatusServiceUnavailable)
	h.SetContentTypeBytes(textPlain)
	h.SetCanonical(retryAfterKey, retryAfterValues[s.retryAfter(j)])
	h.SetCanonical(shedReasonKey, shedReasons[j.reason])
	ctx.Response.SetBodyRaw(shedBodies[j.reason])
}

// retryAfter is Retry-After in seconds for j: the time the queue j would
// have waited in needs to drain at the rate it serves now (for a paced
// write, until the store has absorbed the writes ahead of it), rounded
// up, at least 1 (RFC 9110 counts it in whole seconds, and 0 would ask
// for the retry at once) and at most maxRetryAfter. A pool that cannot
// tell says 1.
func (s *Server) retryAfter(j *job) int {
	if s.drainer == nil {
		return 1
	}
	return retryAfterSeconds(s.drainer.Drain(j))
}

// retryAfterSeconds is drain in whole seconds, rounded up, within [1,
// maxRetryAfter].
func retryAfterSeconds(drain time.Duration) int {
	secs := (drain + time.Second - 1) / time.Second
	return int(min(max(secs, 1), maxRetryAfter))
}
