package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvpool/kvpool/internal/mono"
	"github.com/kvpool/kvpool/internal/mono/monotest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hangGuard bounds every wait for an event in these tests; reaching it is
// a failure (the event never came), never what a test asserts.
const hangGuard = 30 * time.Second

// gate is a Store whose operations record their key in order, then wait
// until the test lets them finish (one per token on proceed). It fails
// the test if an operation arrives for a key in forbidden.
type gate struct {
	t         *testing.T
	mu        sync.Mutex
	order     []string
	began     chan string
	proceed   chan struct{}
	forbidden map[string]bool
}

func newGate(t *testing.T) *gate {
	return &gate{t: t, began: make(chan string, 64), proceed: make(chan struct{}, 64), forbidden: map[string]bool{}}
}

func (g *gate) op(key []byte) {
	g.mu.Lock()
	if g.forbidden[string(key)] {
		g.t.Errorf("operation on %q reached the store: it should have given up", key)
	}
	g.order = append(g.order, string(key))
	g.mu.Unlock()
	g.began <- string(key)
	<-g.proceed
}

func (g *gate) Get(_ int64, dst, key []byte) ([]byte, error) { g.op(key); return dst, nil }
func (g *gate) Put(_ int64, key, _ []byte) error             { g.op(key); return nil }
func (g *gate) Delete(_ int64, key []byte) error             { g.op(key); return nil }
func (g *gate) Close() error                                 { return nil }

// waitFor waits until b's stats satisfy ok, or fails the test.
func waitFor(t *testing.T, b *Bounded, what string, ok func(BoundedStats) bool) {
	t.Helper()
	require.Eventually(t, func() bool { return ok(b.Stats()) }, hangGuard, 50*time.Microsecond, what)
}

// began waits for the next operation to reach the store and returns its key.
func (g *gate) next(t *testing.T) string {
	t.Helper()
	select {
	case k := <-g.began:
		return k
	case <-time.After(hangGuard):
		t.Fatalf("no operation reached the store within %v", hangGuard)
		return ""
	}
}

// TestBoundedWaitersInFIFOOrder: with its one slot held, operations wait,
// and each slot freed goes to the oldest waiter: the store sees them in
// the order they came, whatever kind they are.
func TestBoundedWaitersInFIFOOrder(t *testing.T) {
	g := newGate(t)
	b := WithConcurrency(g, 1, BoundedOptions{})
	done := make(chan error, 8)
	go func() { _, err := b.Get(0, nil, []byte("holder")); done <- err }()
	require.Equal(t, "holder", g.next(t))
	keys := []string{"a", "b", "c", "d", "e"}
	for i, k := range keys {
		switch i % 3 {
		case 0:
			go func() { _, err := b.Get(0, nil, []byte(k)); done <- err }()
		case 1:
			go func() { done <- b.Put(0, []byte(k), nil) }()
		default:
			go func() { done <- b.Delete(0, []byte(k)) }()
		}
		waitFor(t, b, "the operation to queue", func(s BoundedStats) bool { return s.Waiting == i+1 })
	}
	for _, k := range keys {
		g.proceed <- struct{}{} // the one in the store finishes; the next may start
		assert.Equal(t, k, g.next(t))
		assert.Equal(t, 1, b.Stats().InProgress)
	}
	g.proceed <- struct{}{}
	for range len(keys) + 1 {
		require.NoError(t, <-done)
	}
	s := b.Stats()
	assert.Zero(t, s.InProgress)
	assert.Zero(t, s.Waiting)
	assert.Equal(t, 1, s.Capacity)
}

// TestBoundedWaiterGivesUpAtDeadline: on a fake clock, a waiter whose
// deadline passes gives up with ErrDeadline at that moment, leaves the
// queue and never reaches the store; the one behind it moves up; one whose
// deadline has passed before it would wait gives up without queueing; one
// with time left is served; the waits are reported.
func TestBoundedWaiterGivesUpAtDeadline(t *testing.T) {
	g := newGate(t)
	g.forbidden["expiring"], g.forbidden["late"] = true, true
	clk := monotest.New()
	var waits []time.Duration
	var mu sync.Mutex
	b := WithConcurrency(g, 1, BoundedOptions{clock: clk, OnWait: func(d time.Duration) {
		mu.Lock()
		waits = append(waits, d)
		mu.Unlock()
	}})
	holder := make(chan error, 1)
	go func() { holder <- b.Put(0, []byte("holder"), nil) }()
	require.Equal(t, "holder", g.next(t))

	expiring := make(chan error, 1)
	go func() { _, err := b.Get(clk.Now()+int64(5*time.Millisecond), nil, []byte("expiring")); expiring <- err }()
	assert.Equal(t, 5*time.Millisecond, clk.WaitTimer(t), "a waiter waits until its deadline")
	patient := make(chan error, 1)
	go func() { patient <- b.Delete(clk.Now()+int64(time.Hour), []byte("patient")) }()
	assert.Equal(t, time.Hour, clk.WaitTimer(t))
	waitFor(t, b, "both to queue", func(s BoundedStats) bool { return s.Waiting == 2 })

	_, err := b.Get(clk.Now()-1, nil, []byte("late"))
	assert.ErrorIs(t, err, ErrDeadline, "late before it would wait")
	assert.Equal(t, 2, b.Stats().Waiting, "a late newcomer does not queue")

	clk.Advance(5 * time.Millisecond)
	assert.ErrorIs(t, <-expiring, ErrDeadline)
	s := b.Stats()
	assert.Equal(t, 1, s.Waiting)
	assert.EqualValues(t, 2, s.GaveUp)

	g.proceed <- struct{}{}
	require.NoError(t, <-holder)
	assert.Equal(t, "patient", g.next(t), "the waiter behind the one that gave up is next")
	g.proceed <- struct{}{}
	require.NoError(t, <-patient)
	assert.Equal(t, []string{"holder", "patient"}, g.order)
	mu.Lock()
	defer mu.Unlock()
	// holder 0, late 0 (never waited), expiring 5ms; patient waited 5ms
	// on the fake clock too.
	assert.ElementsMatch(t, []time.Duration{0, 0, 5 * time.Millisecond, 5 * time.Millisecond}, waits)
}

// countingStore counts operations in progress in the store and the most
// ever at once.
type countingStore struct {
	now, most atomic.Int64
	ran       atomic.Int64
}

func (c *countingStore) op() {
	n := c.now.Add(1)
	for m := c.most.Load(); n > m && !c.most.CompareAndSwap(m, n); m = c.most.Load() {
	}
	runtime.Gosched()
	c.ran.Add(1)
	c.now.Add(-1)
}

func (c *countingStore) Get(_ int64, dst, _ []byte) ([]byte, error) { c.op(); return dst, nil }
func (c *countingStore) Put(_ int64, _, _ []byte) error             { c.op(); return nil }
func (c *countingStore) Delete(_ int64, _ []byte) error             { c.op(); return nil }
func (c *countingStore) Close() error                               { return nil }

// TestBoundedBoundHolds: 64 callers, some with deadlines that pass while
// they wait (on the real clock), never have more than n operations in the
// store at once; every call either reaches the store or gives up with
// ErrDeadline, exactly once, and the counts add up.
func TestBoundedBoundHolds(t *testing.T) {
	for _, n := range []int{1, 4, 16} {
		t.Run(fmt.Sprintf("n%d", n), func(t *testing.T) {
			inner := &countingStore{}
			b := WithConcurrency(inner, n, BoundedOptions{})
			const callers, each = 64, 100
			var gaveUp atomic.Int64
			var wg sync.WaitGroup
			for range callers {
				wg.Go(func() {
					for i := range each {
						var deadline int64
						if i%2 == 0 {
							deadline = mono.Now() + rand.Int64N(int64(100*time.Microsecond))
						}
						err := b.Put(deadline, nil, nil)
						switch {
						case errors.Is(err, ErrDeadline):
							gaveUp.Add(1)
						case err != nil:
							t.Error(err)
						}
					}
				})
			}
			wg.Wait()
			assert.LessOrEqual(t, inner.most.Load(), int64(n), "operations in the store at once")
			assert.Equal(t, int64(callers*each), inner.ran.Load()+gaveUp.Load())
			s := b.Stats()
			assert.EqualValues(t, gaveUp.Load(), s.GaveUp)
			assert.Zero(t, s.InProgress)
			assert.Zero(t, s.Waiting)
		})
	}
}
