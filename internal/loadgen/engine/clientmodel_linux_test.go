//go:build linux

package engine

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/loadgen/bareserver"
	"github.com/kvpool/kvpool/internal/loadgen/client"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/loadgentest"
	"github.com/kvpool/kvpool/internal/loadgen/record"
)

// attemptsBySeq groups a run's records by request, in attempt order,
// failing the test where a request's attempts are not 0, 1, 2, … each
// recorded once.
func attemptsBySeq(t *testing.T, res *record.Result) map[uint64][]record.Record {
	t.Helper()
	by := map[uint64][]record.Record{}
	for _, rc := range res.Records {
		by[rc.Seq] = append(by[rc.Seq], rc)
	}
	for seq, rs := range by {
		seen := make([]bool, len(rs))
		for _, rc := range rs {
			require.Less(t, int(rc.Attempt), len(rs), "request %d: attempt %d of %d records", seq, rc.Attempt, len(rs))
			require.False(t, seen[rc.Attempt], "request %d: attempt %d recorded twice", seq, rc.Attempt)
			seen[rc.Attempt] = true
		}
		ordered := make([]record.Record, len(rs))
		for _, rc := range rs {
			ordered[rc.Attempt] = rc
		}
		by[seq] = ordered
	}
	return by
}

// firstTimeRefused serves a 503 (Retry-After: 0) to the first request
// for each id and answers the others; it keeps the ids it has seen.
type firstTimeRefused struct {
	mu   sync.Mutex
	seen map[string]int
}

func (s *firstTimeRefused) handle(ctx *fasthttp.RequestCtx) {
	id := string(ctx.QueryArgs().Peek("id"))
	s.mu.Lock()
	s.seen[id]++
	n := s.seen[id]
	s.mu.Unlock()
	if n == 1 {
		ctx.Response.Header.Set("Retry-After", "0")
		ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
		return
	}
	bareserver.Handler(ctx)
}

// A client that retries 503s sends each request twice when the server
// refuses every first try: each attempt is recorded once, the retry
// carries its first try's id, and the totals say so (amplification 2,
// every request answered in the end, none given up).
func TestClientRetriesA503WithTheSameRequest(t *testing.T) {
	srv := &firstTimeRefused{seen: map[string]int{}}
	cfg := testConfig(loadgentest.ServeHandler(t, srv.handle), 500, 200*time.Millisecond)
	cfg.Workload.Keys = 1 << 40 // ids of different requests never coincide
	cfg.KeepRecords = true
	cfg.Client = client.Model{Retries: 2, RetryOn: client.RetryOn{Status503: true}}
	_, res := runEngine(t, cfg)

	require.Equal(t, uint64(100), res.Planned)
	by := attemptsBySeq(t, res)
	require.Len(t, by, 100)
	for seq, rs := range by {
		require.Len(t, rs, 2, "request %d", seq)
		assert.Equal(t, uint16(503), rs[0].Code, "request %d: first try", seq)
		assert.Equal(t, uint16(200), rs[1].Code, "request %d: retry", seq)
		assert.Equal(t, rs[0].Key, rs[1].Key, "request %d: the retry asks for the same id", seq)
		assert.GreaterOrEqual(t, rs[1].Intended, rs[0].End(), "request %d: retried after its first try ended", seq)
		assert.Zero(t, rs[1].Flags&record.FlagGaveUp)
	}
	assert.Equal(t, record.ClientTotals{FirstTries: 100, Retries: 100, Useful: 100, Shed: 100}, res.Clients)
	assert.InDelta(t, 2.0, res.Clients.Amplification(), 1e-9)
	var first, retries, useful, shed int64
	for _, iv := range res.Intervals {
		first, retries, useful, shed = first+iv.FirstTries, retries+iv.Retries, useful+iv.Useful, shed+iv.Shed
	}
	assert.Equal(t, [4]int64{100, 100, 100, 100}, [4]int64{first, retries, useful, shed}, "the series add up to the totals")
}

// A client that always meets a 503 tries Retries+1 times and then gives
// up: the last attempt of every request, and only it, is marked given up.
func TestClientGivesUpAfterItsRetries(t *testing.T) {
	url := loadgentest.ServeHandler(t, func(ctx *fasthttp.RequestCtx) {
		ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
	})
	cfg := testConfig(url, 500, 100*time.Millisecond)
	cfg.KeepRecords = true
	cfg.Client = client.Model{Retries: 2}
	_, res := runEngine(t, cfg)

	by := attemptsBySeq(t, res)
	require.Len(t, by, 50)
	for seq, rs := range by {
		require.Len(t, rs, 3, "request %d: 1 + 2 retries", seq)
		for i, rc := range rs {
			assert.Equal(t, i == 2, rc.Flags&record.FlagGaveUp != 0, "request %d attempt %d: given up only at the last", seq, i)
		}
	}
	assert.Equal(t, record.ClientTotals{FirstTries: 50, Retries: 100, Shed: 150, GaveUp: 50}, res.Clients)
}

// A client that gives up waiting closes its connection and counts a
// timeout; with a retry on timeouts it asks again, and here gets its
// answer. Every attempt carries the time its client still waits. Only lower
// bounds on time: a stall can add timeouts, never remove the hung ones.
func TestClientTimeoutClosesAndRetries(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	seen, deadlines := map[string]int{}, map[string]int{}
	url := loadgentest.ServeHandler(t, func(ctx *fasthttp.RequestCtx) {
		id := string(ctx.QueryArgs().Peek("id"))
		mu.Lock()
		seen[id]++
		n := seen[id]
		deadlines[string(ctx.Request.Header.Peek(api.HeaderRequestTimeout))]++
		mu.Unlock()
		if n == 1 {
			<-release // the first try of each id is never answered in time
		}
		bareserver.Handler(ctx)
	})
	t.Cleanup(func() { close(release) })
	cfg := testConfig(url, 100, 200*time.Millisecond)
	cfg.Workload.Keys = 1 << 40
	cfg.Conns, cfg.MaxConns = 4, 64
	cfg.KeepRecords = true
	cfg.Client = client.Model{Timeout: 100 * time.Millisecond, Retries: 1, RetryOn: client.RetryOn{Timeout: true}, SendDeadline: true}
	_, res := runEngine(t, cfg)

	by := attemptsBySeq(t, res)
	require.Len(t, by, 20)
	for seq, rs := range by {
		require.Len(t, rs, 2, "request %d", seq)
		assert.NotZero(t, rs[0].Flags&record.FlagTimeout, "request %d: its first try timed out", seq)
		assert.GreaterOrEqual(t, rs[0].End()-rs[0].Intended, int64(100*time.Millisecond), "request %d: not before the client's timeout", seq)
		assert.Equal(t, uint16(200), rs[1].Code, "request %d: its retry answered", seq)
	}
	assert.Equal(t, int64(20), res.Clients.Timeouts)
	assert.Equal(t, int64(20), res.Clients.Useful)
	assert.Equal(t, int64(20), res.Errors[record.ErrClientTimeout.Error()])
	mu.Lock()
	defer mu.Unlock()
	sent := 0
	for v, n := range deadlines {
		ms, err := strconv.Atoi(v)
		require.NoError(t, err, "deadline header %q", v)
		assert.True(t, ms >= 1 && ms <= 100, "the time the client still waits, at most its timeout: %q", v)
		sent += n
	}
	assert.Equal(t, 40, sent, "every attempt carries the client's deadline")
}

// The retry queue hands retries back in the order they fall due.
func TestRetryQueueOrdersByTime(t *testing.T) {
	var q retryQueue
	for _, at := range []int64{50, 10, 40, 10, 30, 20, 60, 0} {
		q.push(attempt{at: at})
	}
	var got []int64
	for q.len() > 0 {
		got = append(got, q.pop().at)
	}
	assert.Equal(t, []int64{0, 10, 10, 20, 30, 40, 50, 60}, got)
}

// A client model that the run cannot carry is refused before it starts.
func TestClientModelNeedsTheOpenModelsEventLoop(t *testing.T) {
	cfg := testConfig("http://127.0.0.1:1", 0, time.Second)
	cfg.Client = client.Model{Retries: 1}
	assert.ErrorContains(t, cfg.Validate(), "-rate above 0")
	cfg.Rate = 100
	cfg.Engine = config.EngineVegeta
	assert.ErrorContains(t, cfg.Validate(), "-engine fast")
	cfg.Engine = config.EngineFast
	cfg.Client.Timeout = 2 * cfg.Timeout
	assert.ErrorContains(t, cfg.Validate(), "-client-timeout")
}

// Against a server that refuses everything, a throttled client refuses
// some attempts itself (never sent, recorded once as given up) and a
// client within a retry budget retries no more than its share of first
// tries: every request is still accounted for once per attempt.
func TestClientThrottleAndBudgetAgainstARefusingServer(t *testing.T) {
	url := loadgentest.ServeHandler(t, func(ctx *fasthttp.RequestCtx) {
		ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
	})
	t.Run("throttle", func(t *testing.T) {
		cfg := testConfig(url, 2000, 500*time.Millisecond)
		cfg.KeepRecords = true
		cfg.Client = client.Model{Throttle: 2}
		_, res := runEngine(t, cfg)
		by := attemptsBySeq(t, res)
		require.Len(t, by, 1000, "every request recorded")
		c := res.Clients
		assert.Positive(t, c.Throttled, "the throttle refused some")
		assert.Positive(t, c.FirstTries, "and let some through")
		assert.Equal(t, int64(1000), c.FirstTries+c.Throttled, "each request sent or refused, once")
		assert.Equal(t, c.FirstTries, c.Shed)
		assert.Equal(t, int64(1000), c.GaveUp, "with no accepts, every request fails")
		assert.Equal(t, c.FirstTries, res.Sent, "a refused attempt is not a send")
		for _, rs := range by {
			if rs[0].Flags&record.FlagNotSent != 0 {
				assert.NotZero(t, rs[0].Flags&record.FlagGaveUp)
				assert.Zero(t, rs[0].Code)
			}
		}
	})
	t.Run("budget", func(t *testing.T) {
		cfg := testConfig(url, 2000, 500*time.Millisecond)
		cfg.KeepRecords = true
		cfg.Client = client.Model{Retries: 2, Budget: 0.2}
		_, res := runEngine(t, cfg)
		attemptsBySeq(t, res)
		c := res.Clients
		assert.Equal(t, int64(1000), c.FirstTries)
		assert.Positive(t, c.Retries)
		assert.LessOrEqual(t, c.Retries, int64(200), "retries within 20 % of first tries over the window")
		assert.Equal(t, int64(1000), c.GaveUp)
		assert.Equal(t, c.FirstTries+c.Retries, c.Shed)
	})
}

// A client's timeout runs from when it issued the request: one that the
// loader could not send in time, every connection busy, times out
// without being sent, is recorded once as such, and is retried.
func TestClientTimesOutARequestNoConnectionCouldSend(t *testing.T) {
	release := make(chan struct{})
	var answered sync.Once
	url := loadgentest.ServeHandler(t, func(ctx *fasthttp.RequestCtx) {
		select {
		case <-release:
		case <-time.After(time.Minute): // bounded, never reached: the test closes release
		}
		bareserver.Handler(ctx)
	})
	cfg := testConfig(url, 200, 100*time.Millisecond)
	cfg.Conns, cfg.MaxConns = 1, 1
	cfg.KeepRecords = true
	cfg.Client = client.Model{Timeout: 50 * time.Millisecond}
	t.Cleanup(func() { answered.Do(func() { close(release) }) })
	_, res := runEngine(t, cfg)
	answered.Do(func() { close(release) })

	by := attemptsBySeq(t, res)
	require.Len(t, by, 20)
	c := res.Clients
	assert.Equal(t, int64(20), c.Timeouts, "the one sent and the ones that waited for it")
	assert.Positive(t, c.Expired, "some never found the connection free")
	assert.Equal(t, int64(20), c.FirstTries+c.Expired, "each request sent or expired, once")
	assert.Equal(t, c.FirstTries, res.Sent)
	assert.Equal(t, int64(20), c.GaveUp)
}

// A throttled client whose requests are answered sends nearly all of
// them: the answers are accepts, and once K·accepts exceed the requests
// it refuses none. (Before the first answers, with requests in flight
// and no accept yet, it may refuse a few: the rule's own start-up.)
func TestClientThrottleLetsAnsweredRequestsThrough(t *testing.T) {
	cfg := testConfig(loadgentest.ServeHandler(t, bareserver.Handler), 2000, 500*time.Millisecond)
	cfg.Client = client.Model{Throttle: 2}
	_, res := runEngine(t, cfg)
	c := res.Clients
	assert.Equal(t, int64(1000), c.FirstTries+c.Throttled)
	assert.Equal(t, c.FirstTries, c.Useful, "every request sent was answered")
	assert.LessOrEqual(t, c.Throttled, int64(20), "accepts keep the throttle open")
}

// A client that marks its retries sends each retry's attempt number in
// X-Envoy-Attempt-Count (2, then 3) and nothing with a first try; one
// that does not mark them sends the header with no attempt.
func TestClientMarksRetriesOnTheWire(t *testing.T) {
	f := func(mark bool, want map[int]string) {
		t.Helper()
		var mu sync.Mutex
		seen := map[string]int{}
		headers := map[int]map[string]int{} // attempt (1 = first try) → header value → count
		url := loadgentest.ServeHandler(t, func(ctx *fasthttp.RequestCtx) {
			id := string(ctx.QueryArgs().Peek("id"))
			mu.Lock()
			seen[id]++
			n := seen[id]
			if headers[n] == nil {
				headers[n] = map[string]int{}
			}
			headers[n][string(ctx.Request.Header.Peek(api.HeaderAttemptCount))]++
			mu.Unlock()
			if n < 3 { // the first try and the first retry are refused
				ctx.Response.Header.Set("Retry-After", "0")
				ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
				return
			}
			bareserver.Handler(ctx)
		})
		cfg := testConfig(url, 500, 100*time.Millisecond)
		cfg.Workload.Keys = 1 << 40 // ids of different requests never coincide
		cfg.Client = client.Model{Retries: 2, RetryOn: client.RetryOn{Status503: true}, MarkRetries: mark}
		_, res := runEngine(t, cfg)

		require.Equal(t, record.ClientTotals{FirstTries: 50, Retries: 100, Useful: 50, Shed: 100}, res.Clients)
		mu.Lock()
		defer mu.Unlock()
		for n, h := range want {
			assert.Equal(t, map[string]int{h: 50}, headers[n], "mark %v, attempt %d", mark, n)
		}
	}
	f(true, map[int]string{1: "", 2: "2", 3: "3"})
	f(false, map[int]string{1: "", 2: "", 3: ""})
}
