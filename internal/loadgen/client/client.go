package client

import (
	"math"
	"math/rand/v2"
	"time"
)

// Outcome is how an attempt ended.
type Outcome uint8

const (
	// OK is an answer other than 503 (2xx, 404, other 4xx…): the server
	// accepted the request, whatever it said about it.
	OK Outcome = iota
	// Shed is a 503: the server refused the request.
	Shed
	// Timeout: the client gave up waiting for the answer.
	Timeout
	// Error is a transport error (refused, reset) other than a timeout.
	Error
)

// Refusal is why Done does not retry. It means nothing when Done
// retries.
type Refusal uint8

const (
	// NotRetryable: the outcome is OK or not in the model's RetryOn
	// (a model without retries retries nothing).
	NotRetryable Refusal = iota
	// Exhausted: the attempt was the last the model makes (attempt ==
	// Retries).
	Exhausted
	// OverBudget: the retry budget is spent; the request fails.
	OverBudget
)

// Client is a population of clients behaving as one Model, as one event
// loop of the load lab sees it: the loop asks it, per attempt, whether to
// send (Send) and whether and when to retry (Done). The budget and the
// throttle count over all the loop's requests, as a client library's
// do over all the requests of one process to one service. A Client
// reads no clock (every call takes now from its caller, in ns on any
// monotonic scale the caller keeps) and is not safe for concurrent use:
// each loop, a single goroutine, holds its own. Send and Done allocate
// nothing.
type Client struct {
	m       Model
	retryOn RetryOn // m.RetryOn, or its default when empty
	rng     *rand.Rand
	win     window
}

// New returns a client population behaving as m, which must be valid
// (Model.Validate); its jitter and throttle draws come from a PCG seeded
// by seed, so that a run is reproducible.
func New(m Model, seed uint64) *Client {
	return &Client{
		m:       m,
		retryOn: m.retryOn(),
		rng:     rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
	}
}

// Send is asked before each attempt (the first try: retry false) is sent
// at now. False means the client's throttle refused it: it is never sent
// and has no outcome (Done is not called for it), and it counts as a
// request, not an accept, in the throttle's window. Without a throttle
// Send always says true.
//
// Every first try asked counts towards the retry budget's base, refused
// ones too: the budget is a share of what the application asked for, as
// Finagle deposits into its RetryBudget for every request the
// application issues, so throttling does not also shrink the budget.
func (c *Client) Send(now int64, retry bool) bool {
	if c.m.Budget <= 0 && c.m.Throttle <= 0 {
		return true
	}
	b := c.win.at(now)
	if !retry {
		b.firsts++
		c.win.sum.firsts++
	}
	if c.m.Throttle <= 0 {
		return true
	}
	// The probability is the SRE book's, over the window before this
	// request; then the request counts, sent or not.
	p := c.refuseProbability()
	b.requests++
	c.win.sum.requests++
	return p <= 0 || c.rng.Float64() >= p
}

// refuseProbability is the SRE book's client-side throttling
// probability, max(0, (requests − K·accepts) / (requests + 1)), over the
// window as it stands.
func (c *Client) refuseProbability() float64 {
	r, a := float64(c.win.sum.requests), float64(c.win.sum.accepts)
	return max(0, (r-c.m.Throttle*a)/(r+1))
}

// Done tells c how attempt (0: the first try) ended at now; retryAfter is
// the 503's Retry-After (0 if none or not a 503). It returns whether the
// request is tried again and when (at, on the caller's scale), or why
// not.
//
// A retry is made when the model retries the outcome (RetryOn), attempt
// is below Retries, and the budget, if any, has room: retries granted in
// the window stay below Budget × first tries asked in it. A granted
// retry counts against the budget at once, whether or not the throttle
// lets it be sent later. It is due after the backoff (none: at now; exp:
// uniform in [0, min(BackoffCap, BackoffBase·2^attempt)], full jitter)
// or, with RetryAfter and a 503 that carried one, after retryAfter if
// that is longer.
func (c *Client) Done(now int64, attempt int, out Outcome, retryAfter time.Duration) (at int64, retry bool, why Refusal) {
	if out == OK && c.m.Throttle > 0 {
		c.win.at(now).accepts++
		c.win.sum.accepts++
	}
	if !c.retries(out) {
		return 0, false, NotRetryable
	}
	if attempt >= c.m.Retries {
		return 0, false, Exhausted
	}
	if c.m.Budget > 0 {
		b := c.win.at(now)
		if !c.budgetAllows() {
			return 0, false, OverBudget
		}
		b.retries++
		c.win.sum.retries++
	}
	wait := c.backoff(attempt + 1)
	if c.m.RetryAfter && out == Shed && retryAfter > 0 {
		wait = max(wait, retryAfter)
	}
	return addSat(now, int64(wait)), true, NotRetryable
}

// retries reports whether the model retries an attempt that ended so.
func (c *Client) retries(out Outcome) bool {
	switch out {
	case Shed:
		return c.retryOn.Status503
	case Timeout:
		return c.retryOn.Timeout
	case Error:
		return c.retryOn.Error
	}
	return false
}

// budgetEpsilon absorbs the rounding of Budget × first tries (0.2 × 100
// is 20.000000000000004), so that a budget allows exactly its share.
const budgetEpsilon = 1e-6

// budgetAllows reports whether one more retry keeps the window's retries
// below Budget × its first tries.
func (c *Client) budgetAllows() bool {
	allowed := math.Ceil(c.m.Budget*float64(c.win.sum.firsts) - budgetEpsilon)
	return float64(c.win.sum.retries) < allowed
}

// backoff draws the wait before retry n (1: the first retry).
func (c *Client) backoff(n int) time.Duration {
	if c.m.Backoff != BackoffExp {
		return 0
	}
	bound := expBound(c.m.BackoffBase, c.m.BackoffCap, n)
	if bound <= 0 {
		return 0
	}
	if bound == math.MaxInt64 {
		return time.Duration(c.rng.Int64N(int64(bound)))
	}
	return time.Duration(c.rng.Int64N(int64(bound) + 1))
}

// expBound is min(limit, base·2^(n-1)) without overflow; limit 0 is no
// cap (then the bound saturates at the largest Duration).
func expBound(base, limit time.Duration, n int) time.Duration {
	if limit <= 0 {
		limit = math.MaxInt64
	}
	bound := min(base, limit)
	for i := 1; i < n && bound < limit; i++ {
		if bound > limit/2 {
			return limit
		}
		bound *= 2
	}
	return bound
}

// addSat is a+b (b ≥ 0) saturating at the largest int64.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
