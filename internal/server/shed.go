package server

import (
	"github.com/kvpool/kvpool/internal/pool"
	"github.com/valyala/fasthttp"
)

// A 503 is built from these, made once: under overload the refusal is the
// most frequent answer, and whatever it costs comes out of the CPU that
// serves the requests admitted (docs/results.md, What a 503 costs). Nothing
// here allocates or formats per request; SetBodyRaw points the response at
// the shared body, which no one writes to. X-Shed-Reason is the pool's
// Reason: full, dropped, expired, closed, deadline (the request's own
// deadline passed before its store operation began, in the pool or
// waiting for the store's capacity) or abandoned (its client closed the
// connection while it waited).
var (
	retryAfterKey   = []byte("Retry-After")
	retryAfterValue = []byte("1")
	shedReasonKey   = []byte("X-Shed-Reason")
	textPlain       = []byte("text/plain; charset=utf-8")
	shedReasons     [pool.NumReasons][]byte
	shedBodies      [pool.NumReasons][]byte
)

func init() {
	for r := range pool.NumReasons {
		name := pool.Reason(r).String()
		shedReasons[r] = []byte(name)
		shedBodies[r] = []byte("overloaded (" + name + "); retry later")
	}
}

// shed answers a request the pool refused for reason r: 503 with
// Retry-After and X-Shed-Reason.
func shed(ctx *fasthttp.RequestCtx, r pool.Reason) {
	h := &ctx.Response.Header
	h.SetStatusCode(fasthttp.StatusServiceUnavailable)
	h.SetContentTypeBytes(textPlain)
	h.SetCanonical(retryAfterKey, retryAfterValue)
	h.SetCanonical(shedReasonKey, shedReasons[r])
	ctx.Response.SetBodyRaw(shedBodies[r])
}
