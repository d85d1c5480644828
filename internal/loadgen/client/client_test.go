package client

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	ms = int64(time.Millisecond)
	s  = int64(time.Second)
)

func newClient(t *testing.T, m Model) *Client {
	t.Helper()
	require.NoError(t, m.Validate())
	return New(m, 1)
}

func TestNoBackoffRetriesAtOnce(t *testing.T) {
	for _, b := range []string{"", BackoffNone} {
		c := newClient(t, Model{Retries: 2, Backoff: b})
		at, retry, _ := c.Done(5*s, 0, Shed, 0)
		assert.True(t, retry)
		assert.Equal(t, 5*s, at, "backoff %q", b)
		at, retry, _ = c.Done(7*s, 1, Timeout, 0)
		assert.True(t, retry)
		assert.Equal(t, 7*s, at, "backoff %q", b)
	}
}

// Full jitter: retry n waits uniform in [0, min(cap, base·2^(n-1))], so
// the draws stay in the range and spread over it.
func TestExpBackoffFullJitter(t *testing.T) {
	base, limit := 10*time.Millisecond, time.Second
	c := newClient(t, Model{Retries: 10, Backoff: BackoffExp, BackoffBase: base, BackoffCap: limit})
	now := int64(3 * s)
	for attempt := 0; attempt < 10; attempt++ {
		bound := min(limit, base<<attempt)
		lo, hi := int64(math.MaxInt64), int64(0)
		for range 1000 {
			at, retry, _ := c.Done(now, attempt, Shed, 0)
			require.True(t, retry)
			d := at - now
			require.GreaterOrEqual(t, d, int64(0), "retry %d", attempt+1)
			require.LessOrEqual(t, d, int64(bound), "retry %d", attempt+1)
			lo, hi = min(lo, d), max(hi, d)
		}
		assert.Greater(t, hi, int64(bound)*9/10, "retry %d: draws reach the bound %v", attempt+1, bound)
		assert.Less(t, lo, int64(bound)/10, "retry %d: draws reach 0", attempt+1)
	}
}

func TestExpBound(t *testing.T) {
	f := func(base, limit time.Duration, n int, want time.Duration) {
		t.Helper()
		assert.Equal(t, want, expBound(base, limit, n), "base %v cap %v n %d", base, limit, n)
	}
	f(10*time.Millisecond, time.Second, 1, 10*time.Millisecond)
	f(10*time.Millisecond, time.Second, 2, 20*time.Millisecond)
	f(10*time.Millisecond, time.Second, 7, 640*time.Millisecond)
	f(10*time.Millisecond, time.Second, 8, time.Second)
	f(10*time.Millisecond, time.Second, 1000, time.Second)
	f(time.Second, time.Second, 3, time.Second)
	// Cap 0: no cap, saturating instead of overflowing.
	f(10*time.Millisecond, 0, 8, 1280*time.Millisecond)
	f(10*time.Millisecond, 0, 40, 10*time.Millisecond<<39)
	f(10*time.Millisecond, 0, 1000, math.MaxInt64)
}

// With BackoffCap 0 the exponential backoff doubles without a cap.
func TestExpBackoffCapZeroIsNoCap(t *testing.T) {
	base := 10 * time.Millisecond
	c := newClient(t, Model{Retries: 20, Backoff: BackoffExp, BackoffBase: base})
	var hi int64
	for range 1000 {
		at, retry, _ := c.Done(0, 11, Timeout, 0)
		require.True(t, retry)
		require.LessOrEqual(t, at, int64(base<<11))
		hi = max(hi, at)
	}
	assert.Greater(t, hi, int64(base<<11)*9/10, "retry 12 reaches base·2^11, far above any cap but none")
	_, _, _ = c.Done(0, 19, Timeout, 0) // the largest attempt does not overflow
}

func TestRetryAfter(t *testing.T) {
	exp := Model{Retries: 1, Backoff: BackoffExp, BackoffBase: time.Millisecond, BackoffCap: 2 * time.Millisecond}
	honour := exp
	honour.RetryAfter = true
	honour.RetryOn = RetryOn{Status503: true, Timeout: true, Error: true}
	now := 100 * s

	c := newClient(t, honour)
	for range 100 {
		at, retry, _ := c.Done(now, 0, Shed, 3*time.Second)
		require.True(t, retry)
		assert.Equal(t, now+3*s, at, "Retry-After longer than any backoff")
	}
	// A Retry-After shorter than the backoff draw: the longer wins.
	var longer int
	for range 1000 {
		at, _, _ := c.Done(now, 0, Shed, time.Millisecond/2)
		require.GreaterOrEqual(t, at, now+ms/2)
		require.LessOrEqual(t, at, now+2*ms)
		if at > now+ms/2 {
			longer++
		}
	}
	assert.Greater(t, longer, 500, "backoff draws above Retry-After are kept")

	// Ignored on other outcomes, and when the model does not honour it.
	for _, out := range []Outcome{Timeout, Error} {
		for range 100 {
			at, retry, _ := c.Done(now, 0, out, 3*time.Second)
			require.True(t, retry)
			require.LessOrEqual(t, at, now+2*ms, "%v", out)
		}
	}
	c = newClient(t, exp)
	for range 100 {
		at, retry, _ := c.Done(now, 0, Shed, 3*time.Second)
		require.True(t, retry)
		require.LessOrEqual(t, at, now+2*ms, "RetryAfter false")
	}
}

func TestRetryOnAndExhausted(t *testing.T) {
	outcomes := []Outcome{OK, Shed, Timeout, Error}
	f := func(m Model, want ...Outcome) {
		t.Helper()
		c := newClient(t, m)
		for _, out := range outcomes {
			_, retry, why := c.Done(0, 0, out, 0)
			wanted := false
			for _, w := range want {
				wanted = wanted || w == out
			}
			assert.Equal(t, wanted, retry, "%+v on %v", m, out)
			if !wanted {
				assert.Equal(t, NotRetryable, why, "%+v on %v", m, out)
			}
		}
	}
	f(Model{})
	f(Model{RetryOn: RetryOn{Status503: true, Timeout: true, Error: true}}) // no retries: nothing
	f(Model{Retries: 1}, Shed, Timeout)                                     // the default
	f(Model{Retries: 1, RetryOn: RetryOn{Status503: true}}, Shed)
	f(Model{Retries: 1, RetryOn: RetryOn{Timeout: true}}, Timeout)
	f(Model{Retries: 1, RetryOn: RetryOn{Error: true}}, Error)
	f(Model{Retries: 1, RetryOn: RetryOn{Status503: true, Timeout: true, Error: true}}, Shed, Timeout, Error)

	c := newClient(t, Model{Retries: 2})
	for attempt := 0; attempt < 2; attempt++ {
		_, retry, _ := c.Done(0, attempt, Timeout, 0)
		assert.True(t, retry, "attempt %d", attempt)
	}
	_, retry, why := c.Done(0, 2, Timeout, 0)
	assert.False(t, retry)
	assert.Equal(t, Exhausted, why)
	_, _, why = c.Done(0, 2, OK, 0)
	assert.Equal(t, NotRetryable, why, "an answer is not retried, whichever attempt")
}

// Budget 0.2: 100 first tries allow exactly 20 retries in the window;
// once the window has slid past them, they count no more.
func TestBudgetWindow(t *testing.T) {
	c := newClient(t, Model{Retries: 3, Budget: 0.2})
	for range 100 {
		require.True(t, c.Send(0, false))
	}
	for i := range 20 {
		_, retry, _ := c.Done(int64(i)*ms, 0, Shed, 0)
		require.True(t, retry, "retry %d", i+1)
	}
	_, retry, why := c.Done(50*ms, 1, Shed, 0)
	assert.False(t, retry)
	assert.Equal(t, OverBudget, why)
	assert.Equal(t, NotRetryable, pick(c.Done(50*ms, 1, OK, 0)), "an answer is not over budget")
	assert.Equal(t, Exhausted, pick(c.Done(50*ms, 3, Shed, 0)), "the last attempt is exhausted before any budget")

	// Retries asked of Send do not add to the base.
	for range 100 {
		require.True(t, c.Send(60*ms, true))
	}
	assert.Equal(t, OverBudget, pick(c.Done(60*ms, 0, Shed, 0)))

	// Ten more first tries at 5 s: 110 in the window, 22 retries.
	for range 10 {
		c.Send(5*s, false)
	}
	assert.True(t, retries(c, 5*s, 2))
	assert.Equal(t, OverBudget, pick(c.Done(5*s, 0, Shed, 0)))

	// Just before the window slides past t=0 nothing has changed; just
	// after, the first 100 tries and their 20 retries are gone: 10 first
	// tries, 2 retries spent.
	assert.Equal(t, OverBudget, pick(c.Done(10*s-1, 0, Shed, 0)))
	assert.Equal(t, OverBudget, pick(c.Done(10*s+int64(Bucket), 0, Shed, 0)), "2 spent of 10 × 0.2")
	for range 5 {
		c.Send(10*s+int64(Bucket), false)
	}
	assert.True(t, retries(c, 10*s+int64(Bucket), 1), "15 first tries: a 3rd retry")
	assert.Equal(t, OverBudget, pick(c.Done(10*s+int64(Bucket), 0, Shed, 0)))

	// Long after, everything is forgotten: no first tries, no retries.
	assert.Equal(t, OverBudget, pick(c.Done(60*s, 0, Shed, 0)))
	c.Send(60*s, false)
	c.Send(60*s, false)
	c.Send(60*s, false)
	c.Send(60*s, false)
	c.Send(60*s, false)
	assert.True(t, retries(c, 60*s, 1), "5 first tries: 1 retry")
}

// A budget's share is exact despite rounding: 0.3 × 10 and 0.7 × 10 are
// a hair above 3 and 7.
func TestBudgetShareIsExact(t *testing.T) {
	f := func(budget float64, firsts, want int) {
		t.Helper()
		c := newClient(t, Model{Retries: 1, Budget: budget})
		for range firsts {
			c.Send(0, false)
		}
		n := 0
		for ; n < 10*firsts+1; n++ {
			if _, retry, _ := c.Done(0, 0, Timeout, 0); !retry {
				break
			}
		}
		assert.Equal(t, want, n, "budget %v × %d first tries", budget, firsts)
	}
	f(0.2, 100, 20)
	f(0.3, 10, 3)
	f(0.7, 10, 7)
	f(0.1, 3, 1) // 0.3: one retry while 0 < 0.3
	f(0.25, 10, 3)
	f(1, 7, 7)
	f(0.2, 0, 0)
}

func pick(_ int64, _ bool, why Refusal) Refusal { return why }

// retries reports whether n retries in a row are granted at now.
func retries(c *Client, now int64, n int) bool {
	for range n {
		if _, retry, _ := c.Done(now, 0, Shed, 0); !retry {
			return false
		}
	}
	return true
}

// setWindow fills c's window at now with requests first tries and
// accepts answers.
func setWindow(c *Client, now int64, requests, accepts int) {
	for range requests {
		c.Send(now, false)
	}
	for range accepts {
		c.Done(now, 0, OK, 0)
	}
}

// refusedShare asks Send n times at now with the window as it stands
// (each ask's own count undone), returning the share refused.
func refusedShare(c *Client, now int64, n int) float64 {
	refused := 0
	for range n {
		saved := c.win
		if !c.Send(now, false) {
			refused++
		}
		c.win = saved
	}
	return float64(refused) / float64(n)
}

// The throttle refuses with probability max(0, (R − K·A)/(R + 1)).
func TestThrottleProbability(t *testing.T) {
	const n = 20000
	f := func(k float64, r, a int) {
		t.Helper()
		c := newClient(t, Model{Throttle: k})
		setWindow(c, 0, r, a)
		require.Equal(t, int64(r), c.win.sum.requests)
		require.Equal(t, int64(a), c.win.sum.accepts)
		p := max(0, (float64(r)-k*float64(a))/(float64(r)+1))
		got := refusedShare(c, 50*ms, n)
		tol := 5 * math.Sqrt(p*(1-p)/n)
		assert.InDelta(t, p, got, tol, "K=%v R=%d A=%d", k, r, a)
		if p == 0 {
			assert.Zero(t, got, "K=%v R=%d A=%d: no refusals", k, r, a)
		}
	}
	f(2, 100, 0)
	f(2, 100, 10)
	f(2, 100, 25)
	f(2, 100, 40)
	f(2, 100, 49)
	f(2, 100, 50) // A ≥ R/2: none
	f(2, 100, 80)
	f(2, 1000, 100)
	f(1.5, 300, 100)
	f(2, 0, 0)
	f(2, 1, 0)
}

// Refused attempts count as requests; retries count too; accepts come
// only from OK; and the window's expiry lets everything through again.
func TestThrottleWindow(t *testing.T) {
	c := newClient(t, Model{Throttle: 2, Retries: 1})
	refused := 0
	for range 1000 {
		if !c.Send(0, true) {
			refused++
		}
	}
	assert.Equal(t, int64(1000), c.win.sum.requests, "refused ones count")
	assert.Greater(t, refused, 900, "with no accepts nearly all are refused")
	for _, out := range []Outcome{Shed, Timeout, Error} {
		c.Done(0, 1, out, 0)
	}
	assert.Zero(t, c.win.sum.accepts, "only OK is an accept")

	assert.Greater(t, refusedShare(c, 10*s-1, 1000), 0.9, "still in the window")
	assert.Zero(t, refusedShare(c, 10*s+int64(Bucket), 1000), "expired: nothing refused")
	c.win.at(10*s + int64(Bucket))
	assert.Zero(t, c.win.sum.requests, "refusedShare restores the window it saw, so move it")

	// Accepts older than the window no longer protect.
	setWindow(c, 20*s, 100, 50)
	assert.Zero(t, refusedShare(c, 25*s, 1000))
	setWindow(c, 25*s, 100, 0)
	assert.InDelta(t, 100.0/201, refusedShare(c, 25*s, 10000), 5*math.Sqrt(0.25/10000))
	assert.InDelta(t, 1.0, refusedShare(c, 30*s+int64(Bucket), 10000), 0.03, "the accepts of 20 s are gone, 25 s's requests stay")
}

// Without a throttle Send always says yes.
func TestSendWithoutThrottle(t *testing.T) {
	for _, m := range []Model{{}, {Retries: 2, Budget: 0.1}} {
		c := newClient(t, m)
		for i := range 1000 {
			require.True(t, c.Send(int64(i)*ms, i%2 == 0))
		}
	}
}

// The same seed gives the same draws; another seed others.
func TestSeedReproduces(t *testing.T) {
	m := Model{Retries: 1, Backoff: BackoffExp, BackoffBase: time.Millisecond, BackoffCap: time.Second, Throttle: 2}
	draws := func(seed uint64) []int64 {
		c := New(m, seed)
		var out []int64
		for i := range 200 {
			at, _, _ := c.Done(0, 0, Shed, 0)
			sent := c.Send(int64(i), false)
			out = append(out, at)
			if sent {
				out = append(out, 1)
			}
		}
		return out
	}
	assert.Equal(t, draws(7), draws(7))
	assert.NotEqual(t, draws(7), draws(8))
}

// Time that runs backwards (answers reported slightly out of order)
// counts in the newest bucket; negative times work.
func TestWindowOddTimes(t *testing.T) {
	var w window
	b := w.at(-3 * s)
	b.firsts++
	w.sum.firsts++
	assert.Same(t, b, w.at(-4*s), "earlier than the newest bucket: the newest")
	w.at(-3*s + int64(Window) - 1)
	assert.Equal(t, int64(1), w.sum.firsts)
	w.at(-3*s + int64(Window))
	assert.Zero(t, w.sum.firsts)
	assert.Equal(t, int64(-1), floorDiv(-1, 10))
	assert.Equal(t, int64(9), floorMod(-1, 10))
}

// The event loop's hot path: Send and Done allocate nothing.
func TestSendDoneAllocateNothing(t *testing.T) {
	m, err := Named("budget")
	require.NoError(t, err)
	m.Throttle = 2
	c := New(m, 1)
	now := int64(0)
	allocs := testing.AllocsPerRun(1000, func() {
		now += ms
		if c.Send(now, false) {
			c.Done(now, 0, Shed, time.Second)
			c.Done(now, 1, OK, 0)
		}
	})
	assert.Zero(t, allocs)
}
