package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mapStore is a linearizable Store in a map that counts the Gets reaching
// it. Hooks, if set, run outside its lock and are given the call's number
// (the n-th Get, or the n-th Put or Delete, counting from 1) and its key,
// so that a test can hold one call of several at a chosen point:
// beforeRead before a Get reads the map, afterRead once it has read (the
// value it will return is fixed by then), beforeApply before a Put or
// Delete changes the map, afterApply once it has (the write has taken
// effect, and its caller has not seen it return).
type mapStore struct {
	mu     sync.Mutex
	m      map[string][]byte
	gets   atomic.Int64
	writes atomic.Int64

	beforeRead, afterRead, beforeApply, afterApply func(n int64, key string)
	yield                                          bool // Get calls runtime.Gosched between reading and returning
}

func newMapStore() *mapStore { return &mapStore{m: map[string][]byte{}} }

func (s *mapStore) Get(_ int64, dst, key []byte) ([]byte, error) {
	n := s.gets.Add(1)
	if s.beforeRead != nil {
		s.beforeRead(n, string(key))
	}
	s.mu.Lock()
	v, ok := s.m[string(key)]
	s.mu.Unlock()
	if s.yield {
		runtime.Gosched() // widens the window in which a write may overlap
	}
	if s.afterRead != nil {
		s.afterRead(n, string(key))
	}
	if !ok {
		return dst, ErrNotFound
	}
	return append(dst, v...), nil // v is replaced, never written, by Put
}

func (s *mapStore) Put(_ int64, key, value []byte) error {
	s.write(key, func() { s.m[string(key)] = append([]byte(nil), value...) })
	return nil
}

func (s *mapStore) Delete(_ int64, key []byte) error {
	s.write(key, func() { delete(s.m, string(key)) })
	return nil
}

// write applies a Put or Delete under the lock, between its hooks.
func (s *mapStore) write(key []byte, apply func()) {
	n := s.writes.Add(1)
	if s.beforeApply != nil {
		s.beforeApply(n, string(key))
	}
	s.mu.Lock()
	apply()
	s.mu.Unlock()
	if s.afterApply != nil {
		s.afterApply(n, string(key))
	}
}

func (s *mapStore) Close() error { return nil }

// get reads key through c and returns the value as a string, or "<absent>".
func get(t *testing.T, c Store, key string) string {
	t.Helper()
	v, err := c.Get(0, nil, []byte(key))
	if errors.Is(err, ErrNotFound) {
		return "<absent>"
	}
	require.NoError(t, err)
	return string(v)
}

// checkpoint holds the call that reaches it until the test opens it.
type checkpoint struct{ reached, open chan struct{} }

func newCheckpoint() checkpoint { return checkpoint{make(chan struct{}), make(chan struct{})} }

// hold is what the held call runs: it says it has arrived and waits.
func (p checkpoint) hold() { close(p.reached); <-p.open }

// async runs op in a goroutine; its result comes on the channel.
func async[T any](op func() T) <-chan T {
	ch := make(chan T, 1)
	go func() { ch <- op() }()
	return ch
}

// TestRowCacheHit: the second Get of a key is answered without the store,
// appended to dst as the store's would be, and counted.
func TestRowCacheHit(t *testing.T) {
	s := newMapStore()
	c := NewRowCache(s, 1<<20, RowCacheOptions{})
	require.NoError(t, c.Put(0, []byte("k"), []byte("value")))

	got, err := c.Get(0, []byte("prefix:"), []byte("k"))
	require.NoError(t, err)
	assert.Equal(t, "prefix:value", string(got))
	got, err = c.Get(0, []byte("again:"), []byte("k"))
	require.NoError(t, err)
	assert.Equal(t, "again:value", string(got))
	assert.EqualValues(t, 1, s.gets.Load(), "the second Get reached the store")

	got[len(got)-1] = 'X' // the caller owns what it got: the cache's copy is not it
	assert.Equal(t, "value", get(t, c, "k"))

	st := c.Stats()
	assert.EqualValues(t, 2, st.Hits)
	assert.EqualValues(t, 1, st.Misses)
	assert.Equal(t, 1, st.Entries)
	assert.Positive(t, st.Bytes)
}

// TestRowCacheEmptyValue: an empty value is a value, cached as one.
func TestRowCacheEmptyValue(t *testing.T) {
	s := newMapStore()
	c := NewRowCache(s, 1<<20, RowCacheOptions{})
	require.NoError(t, c.Put(0, []byte("k"), nil))
	assert.Equal(t, "", get(t, c, "k"))
	assert.Equal(t, "", get(t, c, "k"))
	assert.EqualValues(t, 1, s.gets.Load())
	assert.EqualValues(t, 1, c.Stats().Hits)
}

// TestRowCacheAbsentNotCached: a key the store does not have is asked of
// the store every time (no negative entries to go stale or crowd out
// values).
func TestRowCacheAbsentNotCached(t *testing.T) {
	s := newMapStore()
	c := NewRowCache(s, 1<<20, RowCacheOptions{})
	assert.Equal(t, "<absent>", get(t, c, "nope"))
	assert.Equal(t, "<absent>", get(t, c, "nope"))
	assert.EqualValues(t, 2, s.gets.Load())
	assert.Zero(t, c.Stats().Entries)
}

// TestRowCacheWritesInvalidate: a cached key read after a Put or Delete
// returned reads what that write left.
func TestRowCacheWritesInvalidate(t *testing.T) {
	s := newMapStore()
	c := NewRowCache(s, 1<<20, RowCacheOptions{})
	require.NoError(t, c.Put(0, []byte("k"), []byte("v1")))
	assert.Equal(t, "v1", get(t, c, "k"))
	assert.Equal(t, "v1", get(t, c, "k")) // cached now

	require.NoError(t, c.Put(0, []byte("k"), []byte("v2")))
	assert.Equal(t, "v2", get(t, c, "k"))
	assert.Equal(t, "v2", get(t, c, "k"))

	require.NoError(t, c.Delete(0, []byte("k")))
	assert.Equal(t, "<absent>", get(t, c, "k"))
	assert.Zero(t, c.Stats().Entries)
	assert.Zero(t, c.Stats().Bytes, "bytes charged for entries that are gone")
}

// failing fails every write, after (maybe) applying it: a 500 may or may
// not have been applied.
type failing struct {
	*mapStore
	apply bool
}

var errWrite = errors.New("write failed")

func (f failing) Put(d int64, key, value []byte) error {
	if f.apply {
		f.mapStore.Put(d, key, value)
	}
	return errWrite
}

// TestRowCacheFailedWriteInvalidates: a write that failed may have been
// applied all the same, so it drops the key too.
func TestRowCacheFailedWriteInvalidates(t *testing.T) {
	s := newMapStore()
	c := NewRowCache(failing{s, true}, 1<<20, RowCacheOptions{})
	s.m["k"] = []byte("v1")
	assert.Equal(t, "v1", get(t, c, "k"))
	assert.ErrorIs(t, c.Put(0, []byte("k"), []byte("v2")), errWrite)
	assert.Equal(t, "v2", get(t, c, "k"))
	assert.Equal(t, "v2", get(t, c, "k"))
	assert.EqualValues(t, 1, c.Stats().Hits, "a failed write is counted out too: fills go on")
}

// TestRowCacheWriteDuringReadNotFilled: a Get that read the old value
// while a write to its key ended returns what it read (the two overlapped)
// but does not cache it, so the next Get reads the new value. The guard is
// per shard, so a write to another key of the shard also keeps the fill
// out (a lost fill, never a stale one).
func TestRowCacheWriteDuringReadNotFilled(t *testing.T) {
	f := func(writeKey, want string) {
		t.Run(writeKey, func(t *testing.T) {
			s, c := inversionCache()
			read := newCheckpoint()
			s.afterRead = func(n int64, _ string) {
				if n == 1 {
					read.hold()
				}
			}
			r := async(func() string { return get(t, c, "k") })
			<-read.reached
			require.NoError(t, c.Put(0, []byte(writeKey), []byte("v2")))
			close(read.open)
			assert.Equal(t, "v1", <-r, "the overlapping Get")
			assert.EqualValues(t, 1, c.Stats().Dropped)
			assert.Zero(t, c.Stats().Entries)
			assert.Equal(t, want, get(t, c, "k"))
		})
	}
	f("k", "v2")
	f("other", "v1")
}

// TestRowCacheNoFillWhileWriteInFlight: a Get that starts while a write
// is in progress (not yet applied) returns the old value but caches
// nothing, for the write may be applied before the next Get; once the
// write has returned, the next Get reads its value and fills again.
func TestRowCacheNoFillWhileWriteInFlight(t *testing.T) {
	for _, op := range []string{"put", "delete"} {
		t.Run(op, func(t *testing.T) {
			s := newMapStore()
			c := NewRowCache(s, 1<<20, RowCacheOptions{Shards: 1})
			s.m["k"] = []byte("old")
			applying := newCheckpoint()
			s.beforeApply = func(int64, string) { applying.hold() }
			w := async(func() error {
				if op == "put" {
					return c.Put(0, []byte("k"), []byte("new"))
				}
				return c.Delete(0, []byte("k"))
			})
			<-applying.reached
			assert.Equal(t, "old", get(t, c, "k"))
			assert.Zero(t, c.Stats().Entries, "filled while a write was in flight")
			assert.EqualValues(t, 1, c.Stats().Dropped)
			close(applying.open)
			require.NoError(t, <-w)
			want := map[string]string{"put": "new", "delete": "<absent>"}[op]
			assert.Equal(t, want, get(t, c, "k"))
			if op == "put" {
				assert.Equal(t, 1, c.Stats().Entries, "no fill once the write had returned")
				assert.Equal(t, want, get(t, c, "k"))
				assert.EqualValues(t, 1, c.Stats().Hits)
			}
		})
	}
}

// The three tests below hold a write between its apply and its return
// and order reads around it, one read at a time, so that the cache
// could answer a read with a value older than one another read has
// already returned: read-read inversions, which linearizability per key
// forbids. Each would fail with a protocol that lacks one of its parts:
// the first with a gen bumped only as writes end (fills checked against
// writes that ended), the second with no removal as a write begins, the
// third with no count of writes in flight.

// inversionCache is a one-shard cache over a store that holds v1 under
// k, for the inversion tests.
func inversionCache() (*mapStore, *RowCache) {
	s := newMapStore()
	s.m["k"] = []byte("v1")
	return s, NewRowCache(s, 1<<20, RowCacheOptions{Shards: 1})
}

// noInversion ends an inversion test: R3, begun after the read named
// reader returned v2 while the write w of v2 is held after its apply
// (at applied), must read v2; then the write returns.
func noInversion(t *testing.T, c *RowCache, applied checkpoint, w <-chan error, reader string) {
	t.Helper()
	assert.Equal(t, "v2", get(t, c, "k"), "R3 began after %s had returned v2", reader)
	close(applied.open)
	require.NoError(t, <-w)
	assert.Equal(t, "v2", get(t, c, "k"))
}

// TestRowCacheInversionSlowFill: R1 misses and reads v1; a write of v2 is
// applied but has not returned; R2 misses, reads v2 and returns it; R1's
// fill of v1 comes after. R3, begun after R2 returned, must not return v1.
func TestRowCacheInversionSlowFill(t *testing.T) {
	s, c := inversionCache()
	r1Read, r2Read, applied := newCheckpoint(), newCheckpoint(), newCheckpoint()
	s.afterRead = func(n int64, _ string) {
		switch n {
		case 1:
			r1Read.hold()
		case 2:
			r2Read.hold()
		}
	}
	s.afterApply = func(int64, string) { applied.hold() }

	r1 := async(func() string { return get(t, c, "k") })
	<-r1Read.reached
	w := async(func() error { return c.Put(0, []byte("k"), []byte("v2")) })
	<-applied.reached
	r2 := async(func() string { return get(t, c, "k") })
	<-r2Read.reached
	close(r1Read.open) // R1 fills (or tries to) and returns
	assert.Equal(t, "v1", <-r1)
	close(r2Read.open)
	require.Equal(t, "v2", <-r2)
	noInversion(t, c, applied, w, "R2")
}

// TestRowCacheInversionCachedBeforeWrite: R0 misses and waits before its
// read; Rf reads v1 and fills it, no write in flight; a write of v2 is
// applied but has not returned; R0 reads v2 and returns it. R3, begun
// after R0 returned, must not return the v1 cached before the write.
func TestRowCacheInversionCachedBeforeWrite(t *testing.T) {
	s, c := inversionCache()
	r0Before, applied := newCheckpoint(), newCheckpoint()
	s.beforeRead = func(n int64, _ string) {
		if n == 1 {
			r0Before.hold()
		}
	}
	s.afterApply = func(int64, string) { applied.hold() }

	r0 := async(func() string { return get(t, c, "k") })
	<-r0Before.reached
	assert.Equal(t, "v1", get(t, c, "k"), "Rf")
	assert.Equal(t, 1, c.Stats().Entries, "Rf filled: no write was in flight")
	w := async(func() error { return c.Put(0, []byte("k"), []byte("v2")) })
	<-applied.reached
	close(r0Before.open)
	require.Equal(t, "v2", <-r0)
	noInversion(t, c, applied, w, "R0")
}

// TestRowCacheInversionFillDuringWrite: a write of v2 has begun, not yet
// applied; R2 misses and waits before its read; R1 misses, reads v1 and
// returns it (and may fill it); the write is applied but has not
// returned; R2 reads v2 and returns it. R3, begun after R2 returned, must
// not return v1.
func TestRowCacheInversionFillDuringWrite(t *testing.T) {
	s, c := inversionCache()
	r2Before, applying, applied := newCheckpoint(), newCheckpoint(), newCheckpoint()
	s.beforeRead = func(n int64, _ string) {
		if n == 1 {
			r2Before.hold()
		}
	}
	s.beforeApply = func(int64, string) { applying.hold() }
	s.afterApply = func(int64, string) { applied.hold() }

	w := async(func() error { return c.Put(0, []byte("k"), []byte("v2")) })
	<-applying.reached
	r2 := async(func() string { return get(t, c, "k") })
	<-r2Before.reached
	assert.Equal(t, "v1", get(t, c, "k"), "R1")
	close(applying.open)
	<-applied.reached
	close(r2Before.open)
	require.Equal(t, "v2", <-r2)
	noInversion(t, c, applied, w, "R2")
}

// TestRowCacheBoundAndLRU: a shard over its bound drops its least recently
// used entries, and what it holds stays within the bound.
func TestRowCacheBoundAndLRU(t *testing.T) {
	s := newMapStore()
	value := strings.Repeat("v", 100)
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		s.m[k] = []byte(value)
	}
	one := cost("a", []byte(value))                              // every entry costs the same here
	c := NewRowCache(s, 4*one+one/2, RowCacheOptions{Shards: 1}) // room for 4
	for _, k := range []string{"a", "b", "c", "d"} {
		get(t, c, k)
	}
	assert.Equal(t, 4, c.Stats().Entries)
	get(t, c, "a") // a is now the most recently used; b the least
	get(t, c, "e") // evicts b
	st := c.Stats()
	assert.Equal(t, 4, st.Entries)
	assert.EqualValues(t, 1, st.Evictions)
	assert.LessOrEqual(t, st.Bytes, st.Capacity)

	before := s.gets.Load()
	for _, k := range []string{"a", "c", "d", "e"} {
		get(t, c, k)
	}
	assert.Equal(t, before, s.gets.Load(), "a, c, d and e are cached")
	get(t, c, "b")
	assert.Equal(t, before+1, s.gets.Load(), "b was evicted")
}

// TestRowCacheLargeValueNotCached: a value that would take more than a
// quarter of its shard is read through, so it cannot empty the shard.
func TestRowCacheLargeValueNotCached(t *testing.T) {
	s := newMapStore()
	s.m["small"] = []byte("v")
	s.m["big"] = make([]byte, 1000)
	c := NewRowCache(s, 4*1000, RowCacheOptions{Shards: 1})
	get(t, c, "small")
	get(t, c, "big")
	get(t, c, "big")
	st := c.Stats()
	assert.Equal(t, 1, st.Entries)
	assert.EqualValues(t, 3, s.gets.Load())
}

// TestRowCacheBytesMatchEntries: however entries come and go (fills,
// invalidations, evictions), the bytes charged are the sum of the entries
// held, and within the bound.
func TestRowCacheBytesMatchEntries(t *testing.T) {
	s := newMapStore()
	c := NewRowCache(s, 20*(entryOverhead+64), RowCacheOptions{Shards: 2})
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		k := []byte(fmt.Sprint(r.IntN(100)))
		switch n := r.IntN(10); {
		case n < 3:
			require.NoError(t, c.Put(0, k, make([]byte, r.IntN(100))))
		case n < 4:
			require.NoError(t, c.Delete(0, k))
		default:
			c.Get(0, nil, k)
		}
	}
	var sum int64
	n := 0
	for i := range c.shards {
		sh := &c.shards[i]
		for _, k := range sh.lru.Keys() {
			v, _ := sh.lru.Peek(k)
			sum += cost(k, v)
			n++
		}
		assert.LessOrEqual(t, sh.bytes, sh.capacity)
	}
	st := c.Stats()
	assert.Equal(t, sum, st.Bytes)
	assert.Equal(t, n, st.Entries)
	assert.Positive(t, st.Evictions)
}

// TestRowCacheHitAllocatesNothing: a hit copies into the caller's buffer
// and allocates nothing, also for a key too long for the compiler's
// stack buffer for a []byte to string conversion.
func TestRowCacheHitAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	s := newMapStore()
	c := NewRowCache(s, 1<<20, RowCacheOptions{})
	key := []byte(strings.Repeat("k", 100))
	require.NoError(t, c.Put(0, key, make([]byte, 500)))
	buf, err := c.Get(0, nil, key)
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(100, func() {
		buf, err = c.Get(0, buf[:0], key)
	})
	require.NoError(t, err)
	assert.Zero(t, allocs)
	assert.Len(t, buf, 500)
}

// TestRowCacheStress: many readers and one writer per key, over few keys
// in few shards, the store yielding inside each read so that writes
// overlap reads. Each key's writer puts and deletes in turn, each
// operation numbered; a put's value is its number. A read notes the
// number of the key's last acknowledged operation before it starts, and
// the highest number any read of the key had returned by then (for an
// absent answer, the lowest delete it can be), and of the last started
// operation after it ends; what it got must lie between: a put numbered
// at least the higher of the two notes, or absent where a delete (or the
// empty start, number 0) lies in that range. So a read may not return a
// value older than an earlier read returned, nor one older than an
// acknowledged write. Readers go on until every writer is done; every
// operation must be answered.
func TestRowCacheStress(t *testing.T) {
	f := func(name string, maxBytes int64, shards int) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// The last operation, 1501, is a put: the cache ends full.
			const keys, readers, writesPerKey, minReads = 8, 8, 1501, 1000
			s := newMapStore()
			s.yield = true
			c := NewRowCache(s, maxBytes, RowCacheOptions{Shards: shards})
			var acked, started, returned [keys]atomic.Uint64
			isDelete := func(n uint64) bool { return n%3 == 0 }
			// raise records that a read of key k returned operation n.
			raise := func(k int, n uint64) {
				for cur := returned[k].Load(); n > cur && !returned[k].CompareAndSwap(cur, n); cur = returned[k].Load() {
				}
			}
			keyOf := func(k int) []byte { return []byte(fmt.Sprintf("key-%d", k)) }

			var reads, answered atomic.Int64
			var writersDone atomic.Bool
			var writers, all sync.WaitGroup
			for k := range keys {
				writers.Go(func() {
					key, value := keyOf(k), make([]byte, 8)
					for n := uint64(1); n <= writesPerKey; n++ {
						started[k].Store(n)
						var err error
						if isDelete(n) {
							err = c.Delete(0, key)
						} else {
							binary.BigEndian.PutUint64(value, n)
							err = c.Put(0, key, value)
						}
						if !assert.NoError(t, err) {
							return
						}
						acked[k].Store(n)
						answered.Add(1)
						runtime.Gosched() // let reads fill between writes
					}
				})
			}
			all.Go(func() { writers.Wait(); writersDone.Store(true) })
			for r := range readers {
				all.Go(func() {
					var buf []byte
					for i := 0; i < minReads || !writersDone.Load(); i++ {
						k := (i*7 + r) % keys
						ack := acked[k].Load()
						lo := max(ack, returned[k].Load())
						reads.Add(1)
						var err error
						buf, err = c.Get(0, buf[:0], keyOf(k))
						last := started[k].Load()
						answered.Add(1)
						switch {
						case errors.Is(err, ErrNotFound):
							// Some delete numbered in [lo, last]: 0 counts.
							d := (lo + 2) / 3 * 3
							if d > last {
								t.Errorf("key %d read absent; acknowledged op %d, returned by an earlier read %d, last started %d, no delete between", k, ack, lo, last)
								return
							}
							raise(k, d)
						case err != nil:
							t.Errorf("key %d: %v", k, err)
							return
						default:
							got := binary.BigEndian.Uint64(buf)
							if got < lo || got > last || isDelete(got) {
								t.Errorf("key %d read put %d; acknowledged op %d, returned by an earlier read %d, last started %d", k, got, ack, lo, last)
								return
							}
							raise(k, got)
						}
					}
				})
			}
			finished := make(chan struct{})
			go func() { all.Wait(); close(finished) }()
			select {
			case <-finished:
			case <-time.After(hangGuard):
				t.Fatalf("operations unanswered after %v", hangGuard)
			}
			require.False(t, t.Failed())
			assert.EqualValues(t, keys*writesPerKey+reads.Load(), answered.Load(), "operations answered")

			// Quiet now: every key reads as its last write left it, twice
			// (the second from the cache where it fits).
			want := string(binary.BigEndian.AppendUint64(nil, writesPerKey))
			for k := range keys {
				assert.Equal(t, want, get(t, c, string(keyOf(k))))
				assert.Equal(t, want, get(t, c, string(keyOf(k))))
			}
			st := c.Stats()
			assert.LessOrEqual(t, st.Bytes, st.Capacity)
			assert.Positive(t, st.Hits, "no read was answered from the cache: the test tests nothing")
			t.Logf("%d reads; %+v", reads.Load(), st)
		})
	}
	f("roomy", 1<<20, 2)
	// Room for about 5 of the 8 keys in one shard: evictions all along.
	f("tight", 5*(entryOverhead+16), 1)
}
