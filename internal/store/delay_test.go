package store

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// journal records, in order, what the store under test and its sleep did.
type journal struct {
	mu     sync.Mutex
	events []string
	slept  []time.Duration
}

func (j *journal) add(e string) { j.mu.Lock(); j.events = append(j.events, e); j.mu.Unlock() }

func (j *journal) sleep(d time.Duration) {
	j.mu.Lock()
	j.events = append(j.events, "sleep")
	j.slept = append(j.slept, d)
	j.mu.Unlock()
}

// journaled is a map Store that notes each call in a journal.
type journaled struct {
	j  *journal
	mu sync.Mutex
	m  map[string]string
}

func (s *journaled) Get(_ int64, dst, key []byte) ([]byte, error) {
	s.j.add("get")
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[string(key)]
	if !ok {
		return dst, ErrNotFound
	}
	return append(dst, v...), nil
}

func (s *journaled) Put(_ int64, key, value []byte) error {
	s.j.add("put")
	s.mu.Lock()
	s.m[string(key)] = string(value)
	s.mu.Unlock()
	return nil
}

func (s *journaled) Delete(_ int64, key []byte) error {
	s.j.add("delete")
	s.mu.Lock()
	delete(s.m, string(key))
	s.mu.Unlock()
	return nil
}

func (s *journaled) Close() error { s.j.add("close"); return nil }

// delayedOver wraps a journaled store with WithDelay and swaps the sleep
// for the journal's, so no test waits on the wall clock.
func delayedOver(t *testing.T, d time.Duration, dist DelayDist) (Store, *journal) {
	t.Helper()
	j := &journal{}
	s := WithDelay(&journaled{j: j, m: map[string]string{}}, d, dist)
	ds, ok := s.(*delayed)
	require.True(t, ok, "WithDelay(%v) must wrap the store", d)
	ds.sleep = j.sleep
	return ds, j
}

// TestWithDelaySleepsBeforeEveryOperation: Get, Put and Delete each sleep
// the fixed delay first, then reach the store with their results intact;
// Close does not sleep.
func TestWithDelaySleepsBeforeEveryOperation(t *testing.T) {
	s, j := delayedOver(t, 3*time.Millisecond, DelayFixed)
	require.NoError(t, s.Put(0, []byte("k"), []byte("v")))
	got, err := s.Get(0, []byte("x"), []byte("k"))
	require.NoError(t, err)
	assert.Equal(t, "xv", string(got))
	require.NoError(t, s.Delete(0, []byte("k")))
	_, err = s.Get(0, nil, []byte("k"))
	assert.ErrorIs(t, err, ErrNotFound)
	require.NoError(t, s.Close())

	assert.Equal(t, []string{"sleep", "put", "sleep", "get", "sleep", "delete", "sleep", "get", "close"}, j.events)
	assert.Equal(t, []time.Duration{3 * time.Millisecond, 3 * time.Millisecond, 3 * time.Millisecond, 3 * time.Millisecond}, j.slept)
}

// TestWithDelayOff: no delay means the store itself, not a wrapper.
func TestWithDelayOff(t *testing.T) {
	inner := &journaled{j: &journal{}, m: map[string]string{}}
	assert.Same(t, inner, WithDelay(inner, 0, DelayExp).(*journaled))
	assert.Same(t, inner, WithDelay(inner, -time.Second, DelayFixed).(*journaled))
}

// TestWithDelayExp: exponential delays are non-negative, vary, and average
// the mean. With n draws the sample mean's relative standard error is
// 1/sqrt(n), 0.3 % here: the 5 % tolerance is over 15 standard errors, so
// the test does not flake, yet a mis-scaled draw fails it, and so does a
// fixed one: 1-1/e (about 63 %) of exponential draws fall below the mean,
// none of a fixed delay's.
func TestWithDelayExp(t *testing.T) {
	const mean, n = 2 * time.Millisecond, 100_000
	s, j := delayedOver(t, mean, DelayExp)
	for range n {
		_, _ = s.Get(0, nil, []byte("k"))
	}
	require.Len(t, j.slept, n)
	var sum time.Duration
	below := 0
	for _, d := range j.slept {
		require.GreaterOrEqual(t, d, time.Duration(0))
		sum += d
		if d < mean {
			below++
		}
	}
	got := float64(sum) / n
	assert.InEpsilon(t, float64(mean), got, 0.05, "sample mean %v", time.Duration(got))
	assert.InDelta(t, 0.632, float64(below)/n, 0.02, "share of draws below the mean (1-1/e for an exponential)")
}

// TestWithDelayConcurrent: the decorator and its draws are safe for
// concurrent use (run under -race).
func TestWithDelayConcurrent(t *testing.T) {
	s, j := delayedOver(t, time.Millisecond, DelayExp)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			key := []byte{byte(g)}
			for range 200 {
				assert.NoError(t, s.Put(0, key, key))
				_, err := s.Get(0, nil, key)
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	assert.Len(t, j.slept, 8*200*2)
}

func TestParseDelayDist(t *testing.T) {
	for _, d := range DelayDists {
		got, err := ParseDelayDist(string(d))
		require.NoError(t, err)
		assert.Equal(t, d, got)
	}
	_, err := ParseDelayDist("normal")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"normal"`)
	assert.Contains(t, err.Error(), "fixed")
}
