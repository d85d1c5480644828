package server

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/mono"
	"github.com/kvpool/kvpool/internal/pool"
	"github.com/kvpool/kvpool/internal/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"
)

// hangGuard bounds a test's wait for an event; reaching it is a failure.
const hangGuard = 30 * time.Second

// watchedStore is a store for deadline tests: an operation on the id
// "hold" tells held it has begun and waits until release is closed; an
// operation on an id in forbidden fails the test (it should never have
// reached the store); every other one succeeds at once.
type watchedStore struct {
	t         *testing.T
	held      chan struct{}
	release   chan struct{}
	forbidden sync.Map // id -> true
	touched   sync.Map // id -> *atomic.Int32: operations that reached the store
}

func newWatchedStore(t *testing.T) *watchedStore {
	return &watchedStore{t: t, held: make(chan struct{}, 16), release: make(chan struct{})}
}

func (s *watchedStore) op(key []byte) {
	k := string(key)
	if _, bad := s.forbidden.Load(k); bad {
		s.t.Errorf("an operation on %q reached the store past its deadline", k)
	}
	n, _ := s.touched.LoadOrStore(k, new(atomic.Int32))
	n.(*atomic.Int32).Add(1)
	if k == "hold" {
		s.held <- struct{}{}
		<-s.release
	}
}

func (s *watchedStore) touches(k string) int32 {
	if n, ok := s.touched.Load(k); ok {
		return n.(*atomic.Int32).Load()
	}
	return 0
}

func (s *watchedStore) Get(_ int64, dst, key []byte) ([]byte, error) {
	s.op(key)
	return append(dst, 'v'), nil
}
func (s *watchedStore) Put(_ int64, key, _ []byte) error { s.op(key); return nil }
func (s *watchedStore) Delete(_ int64, key []byte) error { s.op(key); return nil }
func (s *watchedStore) Close() error                     { return nil }

// served is a request being served through s.route on a goroutine of its
// own, as fasthttp would serve it: its status code, X-Shed-Reason and
// body arrive on done.
type served struct {
	code                     int
	reason, body, retryAfter string
	retryAfterSet            bool
}

func serveAsync(t *testing.T, s *Server, request string) <-chan served {
	t.Helper()
	var req fasthttp.Request
	require.NoError(t, req.Read(bufio.NewReader(strings.NewReader(request))))
	done := make(chan served, 1)
	go func() {
		ctx := new(fasthttp.RequestCtx)
		ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}, nil)
		s.route(ctx)
		h := &ctx.Response.Header
		done <- served{code: ctx.Response.StatusCode(), reason: string(h.Peek("X-Shed-Reason")),
			body: string(ctx.Response.Body()), retryAfter: string(h.Peek("Retry-After")), retryAfterSet: len(h.Peek("Retry-After")) > 0}
	}()
	return done
}

func receive(t *testing.T, ch <-chan served) served {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(hangGuard):
		t.Fatalf("no answer within %v", hangGuard)
		return served{}
	}
}

func getWithTimeout(id string, ms string) string {
	return "GET /v0/entity?id=" + id + " HTTP/1.1\r\nHost: x\r\n" + api.HeaderRequestTimeout + ": " + ms + "\r\n\r\n"
}

// passed waits until more than d has passed on the mono clock since
// from: the deadline the test set has passed.
func passed(t *testing.T, from int64, d time.Duration) {
	t.Helper()
	require.Eventually(t, func() bool { return mono.Now() > from+int64(d) }, hangGuard, 100*time.Microsecond)
}

// poolModes are every pool in both exec modes (direct once: it runs in
// the handler whatever -exec says).
func poolModes() []Config {
	var cfgs []Config
	for _, name := range pool.Variants {
		for _, exec := range []pool.Exec{pool.ExecHandler, pool.ExecWorker} {
			if pool.HandlerOnly(name) && exec == pool.ExecWorker {
				continue
			}
			cfg := DefaultConfig()
			cfg.Pool, cfg.Pcfg.Exec, cfg.Pcfg.Workers = name, exec, 1
			if name == pool.Auto {
				cfg.Pcfg.Limit.Algorithm = "fixed" // one slot, as the others have
			}
			cfg.Pcfg.QueueTimeout = 0 // only the deadline sheds here
			cfg.DropClosedAfter = 0
			cfgs = append(cfgs, cfg)
		}
	}
	return cfgs
}

func modeName(cfg Config) string { return cfg.Pool + "/" + cfg.Pcfg.Exec.String() }

// isFailsafe tells whether pool name is failsafe-go's limiter, whose
// queue is the library's (no -queue-timeout; a deadline ends a wait).
func isFailsafe(name string) bool { return name == pool.Failsafe || name == pool.FailsafePriority }

// holding starts a server of cfg over a watchedStore that fails the test
// if an operation on forbidden reaches it, and a GET of "hold" that holds
// its worker or slot (and its store slot) until st.release is closed;
// the pool is closed when the test ends.
func holding(t *testing.T, cfg Config, forbidden string) (*Server, *watchedStore, <-chan served) {
	t.Helper()
	st := newWatchedStore(t)
	st.forbidden.Store(forbidden, true)
	s, err := New(resolved(t, cfg), st, Options{})
	require.NoError(t, err)
	t.Cleanup(s.pool.Close)
	hold := serveAsync(t, s, "GET /v0/entity?id=hold HTTP/1.1\r\nHost: x\r\n\r\n")
	<-st.held
	return s, st, hold
}

// TestDeadlinePassedInPoolNeverTouchesStore: a request whose deadline
// passes while it waits in the pool's queue (the only worker or slot held
// by another request) is answered 503 with Retry-After and X-Shed-Reason
// deadline, and its operation never reaches the store, in every queueing
// pool and both exec modes; it is counted in the pool's and the deadline
// metrics.
func TestDeadlinePassedInPoolNeverTouchesStore(t *testing.T) {
	for _, cfg := range poolModes() {
		if cfg.Pool == "direct" {
			continue // no queue: TestDeadlinePassedInStoreNeverTouchesIt covers direct
		}
		t.Run(modeName(cfg), func(t *testing.T) {
			s, st, hold := holding(t, cfg, "late")
			late := serveAsync(t, s, getWithTimeout("late", "1"))
			var r served
			if isFailsafe(cfg.Pool) {
				// The library's wait for a permit ends at the deadline:
				// the request is answered while the slot is still held.
				r = receive(t, late)
				close(st.release)
				assert.Equal(t, 200, receive(t, hold).code)
			} else {
				require.Eventually(t, func() bool { return s.PoolStats().Queued == 1 }, hangGuard, 50*time.Microsecond)
				passed(t, mono.Now(), time.Millisecond) // queued: its deadline was set before now
				close(st.release)
				assert.Equal(t, 200, receive(t, hold).code)
				r = receive(t, late)
			}
			assert.Equal(t, 503, r.code)
			assert.Equal(t, "deadline", r.reason)
			assert.True(t, r.retryAfterSet)
			assert.Zero(t, st.touches("late"))
			assert.EqualValues(t, 1, s.PoolStats().Rejected[pool.ReasonDeadline])
			hasMetric(t, s, `kvserver_deadline_dropped_total{stage="pool"} 1`)
		})
	}
}

// TestDeadlinePassedInStoreNeverTouchesIt: behind -io-concurrency 1, a
// request whose deadline passes while it waits for the store's one slot
// gives up then (no release needed) and is answered 503 deadline without
// touching the store, under every pool and exec mode, direct included.
// Its timeout must outlast its way through the pool to the store's
// queue, where the test wants it to pass: 1 ms did not on a busy 2-core
// machine under -race (the pool refused it first, stage "pool"); 100 ms
// does, at 100 ms a mode.
func TestDeadlinePassedInStoreNeverTouchesIt(t *testing.T) {
	for _, cfg := range poolModes() {
		t.Run(modeName(cfg), func(t *testing.T) {
			cfg.Pcfg.Workers, cfg.IOConcurrency = 2, 1
			s, st, hold := holding(t, cfg, "late")
			r := receive(t, serveAsync(t, s, getWithTimeout("late", "100")))
			assert.Equal(t, 503, r.code)
			assert.Equal(t, "deadline", r.reason)
			assert.Zero(t, st.touches("late"))
			close(st.release)
			assert.Equal(t, 200, receive(t, hold).code)
			hasMetric(t, s, `kvserver_deadline_dropped_total{stage="store"} 1`, `kvserver_io_deadline_total 1`,
				`kvserver_io_concurrency 1`, `kvserver_io_wait_seconds_count 2`, `io_concurrency="1"`)
		})
	}
}

// TestWastedWork: a request whose operation ran and finished past its
// deadline is answered as usual and counted as wasted; one that finished
// in time is not. The slow one's 100 ms must outlast its way to the
// store (1 ms did not on a busy machine under -race: the pool refused it
// first, and the test waited for the store for ever).
func TestWastedWork(t *testing.T) {
	st := newWatchedStore(t)
	cfg := DefaultConfig()
	s, err := New(resolved(t, cfg), st, Options{})
	require.NoError(t, err)
	defer s.pool.Close()
	slow := serveAsync(t, s, getWithTimeout("hold", "100"))
	select {
	case <-st.held:
	case r := <-slow:
		t.Fatalf("answered %d %q before it reached the store", r.code, r.reason)
	}
	passed(t, mono.Now(), 100*time.Millisecond) // in the store: its deadline was set before now
	close(st.release)
	assert.Equal(t, 200, receive(t, slow).code)
	assert.Equal(t, 200, receive(t, serveAsync(t, s, getWithTimeout("quick", "60000"))).code)
	hasMetric(t, s, "kvserver_deadline_wasted_total 1", "kvserver_deadline_requests_total 2")
}

// TestRequestTimeoutHeader: the deadline header is whole milliseconds,
// 1 to 8 digits, given once; anything else is 400 naming the header, the
// store untouched.
func TestRequestTimeoutHeader(t *testing.T) {
	st := newWatchedStore(t)
	st.forbidden.Store("bad", true)
	s, err := New(resolved(t, DefaultConfig()), st, Options{})
	require.NoError(t, err)
	defer s.pool.Close()
	for _, v := range []string{"0", "-5", "+5", "1.5", "5ms", "abc", "123456789", "0x10", "1 2"} {
		r := receive(t, serveAsync(t, s, getWithTimeout("bad", v)))
		assert.Equal(t, 400, r.code, "%q", v)
		assert.Contains(t, r.body, api.HeaderRequestTimeout, "%q", v)
	}
	twice := "GET /v0/entity?id=bad HTTP/1.1\r\nHost: x\r\nX-Request-Timeout-Ms: 5\r\nx-request-timeout-ms: 5\r\n\r\n"
	assert.Equal(t, 400, receive(t, serveAsync(t, s, twice)).code)
	for _, v := range []string{"1000", "99999999", " 250 ", "007"} {
		assert.Equal(t, 200, receive(t, serveAsync(t, s, getWithTimeout("good", v))).code, "%q", v)
	}
	lower := "GET /v0/entity?id=good HTTP/1.1\r\nHost: x\r\nx-request-timeout-ms: 5000\r\n\r\n"
	assert.Equal(t, 200, receive(t, serveAsync(t, s, lower)).code)
	hasMetric(t, s, "kvserver_deadline_requests_total 5")
}

// TestDeadlinesAnsweredOnce: 16 clients send requests with deadlines of 1
// to 3 ms to a server whose store is slower than that in bursts (-io-delay
// 200µs behind -io-concurrency 2), under every pool and exec mode: every
// request is answered once, each 503 (deadline, expired, or full where
// auto's wait bound, once it has timed the store, turns a request away
// at the door) left the store untouched, and each request served reached
// it exactly once.
func TestDeadlinesAnsweredOnce(t *testing.T) {
	for _, cfg := range poolModes() {
		t.Run(modeName(cfg), func(t *testing.T) {
			cfg.Pcfg.Workers, cfg.IOConcurrency, cfg.IODelay = 2, 2, 200*time.Microsecond
			if !isFailsafe(cfg.Pool) { // the library times no wait out
				cfg.Pcfg.QueueTimeout = time.Millisecond
			}
			st := newWatchedStore(t)
			s, err := New(resolved(t, cfg), st, Options{})
			require.NoError(t, err)
			defer s.pool.Close()
			const clients, each = 16, 20
			answers := make([]served, clients*each)
			var wg sync.WaitGroup
			for c := range clients {
				wg.Go(func() {
					for i := range each {
						n := c*each + i
						answers[n] = receive(t, serveAsync(t, s, getWithTimeout(fmt.Sprint(n), fmt.Sprint(1+n%3))))
					}
				})
			}
			wg.Wait()
			for n, a := range answers {
				id := fmt.Sprint(n)
				switch {
				case a.code == 200:
					assert.EqualValues(t, 1, st.touches(id), "request %d served", n)
				case a.code == 503 && (a.reason == "deadline" || a.reason == "expired" || a.reason == "full"):
					assert.Zero(t, st.touches(id), "request %d shed (%s) but reached the store", n, a.reason)
				default:
					t.Errorf("request %d: %d %s", n, a.code, a.reason)
				}
			}
		})
	}
}

// hasMetric checks that s's /metrics text holds each of want.
func hasMetric(t *testing.T, s *Server, want ...string) {
	t.Helper()
	ctx := new(fasthttp.RequestCtx)
	var req fasthttp.Request
	req.SetRequestURI("/metrics")
	ctx.Init(&req, nil, nil)
	s.route(ctx)
	require.Equal(t, 200, ctx.Response.StatusCode())
	text := string(ctx.Response.Body())
	for _, w := range want {
		assert.True(t, strings.Contains(text, w), "/metrics lacks %s", w)
	}
}

var _ store.Store = (*watchedStore)(nil)
