package store

import (
	"hash/maphash"
	"math"
	"math/bits"
	"runtime"
	"sync"
	"unsafe"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// RowCache keeps recently read values in memory in front of the store it
// wraps, so that a GET of a hot key skips the engine's point lookup
// (Pebble's memtable search or its iterator through the levels), which
// is most of what a GET costs kvserver beyond HTTP.
//
// What must hold: once a Put or Delete has returned, no Get that starts
// after it returns an older value. A write invalidates its key after the
// wrapped store's write returned (whatever it returned: a failed write
// may have been applied) and before it returns itself; a Get that missed
// fills the cache with what it read only if no write to its shard ended
// while it read: each shard counts the writes that ended in it (gen), a
// Get notes gen under the shard's lock before it reads the store and
// fills only if gen is unchanged under the lock again. So a filled value
// was read after the last write to the key that had ended before the
// fill, and a write that had not ended by then removes it when it ends.
//
// Memory is bounded in bytes: each entry is charged its key, its value's
// allocation and entryOverhead, and a shard over its share of the bound
// drops its least recently used entries. A value too large for a quarter
// of a shard's share is not cached, so one large value cannot empty a
// shard. Cached values are never written after they are filled: a hit
// copies one into the caller's dst outside the lock.
//
// Locks: one mutex per shard, never two held at once; the wrapped store
// is never called under one.
type RowCache struct {
	inner  Store
	seed   maphash.Seed
	shards []rowShard
	mask   uint64
}

var _ Store = (*RowCache)(nil)

// RowCacheOptions are what a RowCache may be given besides its store and
// its size.
type RowCacheOptions struct {
	// Shards is the number of independently locked parts, rounded up to a
	// power of two; 0 means DefaultRowCacheShards().
	Shards int
}

// entryOverhead is what an entry costs beyond its key and value bytes: the
// LRU's list entry (96 B), the map's slot with its share of the table's
// slack (about 48 B) and the key's rounding up to an allocation size
// class. An estimate, so that a bound in bytes holds for small values too.
const entryOverhead = 160

// DefaultRowCacheShards is 4 per CPU (GOMAXPROCS), a power of two between
// 16 and 256: with a lock held for a map lookup and a list move, 4 per
// CPU keeps two CPUs from meeting on one lock most of the time.
func DefaultRowCacheShards() int { return clampPow2(4*runtime.GOMAXPROCS(0), 16, 256) }

func clampPow2(n, lo, hi int) int {
	n = min(max(n, lo), hi)
	return 1 << bits.Len(uint(n-1))
}

// NewRowCache returns s behind a row cache of at most maxBytes, which must
// be positive.
func NewRowCache(s Store, maxBytes int64, o RowCacheOptions) *RowCache {
	n := o.Shards
	if n <= 0 {
		n = DefaultRowCacheShards()
	}
	n = clampPow2(n, 1, 1<<16)
	c := &RowCache{inner: s, seed: maphash.MakeSeed(), shards: make([]rowShard, n), mask: uint64(n - 1)}
	share := max(maxBytes/int64(n), 1)
	for i := range c.shards {
		sh := &c.shards[i]
		sh.capacity = share
		// The count bound is never reached: bytes bound the shard. The
		// callback runs on every removal (invalidation and eviction alike),
		// under the shard's lock, so bytes stays the sum of the entries.
		sh.lru, _ = simplelru.NewLRU[string, []byte](math.MaxInt, func(k string, v []byte) {
			sh.bytes -= cost(k, v)
		})
	}
	return c
}

// rowShard is one independently locked part of the cache.
type rowShard struct {
	mu       sync.Mutex
	lru      *simplelru.LRU[string, []byte] // guarded by mu
	gen      uint64                         // writes ended in this shard; guarded by mu
	bytes    int64                          // charged for the entries; guarded by mu
	capacity int64

	hits, misses, evictions, dropped uint64 // guarded by mu

	_ [64]byte // keeps a neighbour's lock off this shard's cache lines
}

// cost is what an entry of key and value is charged.
func cost(key string, value []byte) int64 {
	return int64(len(key) + cap(value) + entryOverhead)
}

func (c *RowCache) shard(key []byte) *rowShard {
	return &c.shards[maphash.Bytes(c.seed, key)&c.mask]
}

// lookup is key as a string for the LRU's Get and Remove, which only look
// a key up in their map and keep no reference to it; every key the LRU
// stores is a copy (see fill).
func lookup(key []byte) string { return unsafe.String(unsafe.SliceData(key), len(key)) }

// Get implements Store. A hit appends the cached value to dst; a miss
// reads the wrapped store and fills the cache if no write to the shard
// overlapped the read.
func (c *RowCache) Get(deadline int64, dst, key []byte) ([]byte, error) {
	sh := c.shard(key)
	sh.mu.Lock()
	v, ok := sh.lru.Get(lookup(key))
	if ok {
		sh.hits++
		sh.mu.Unlock()
		return append(dst, v...), nil // v is never written once cached
	}
	sh.misses++
	gen := sh.gen
	sh.mu.Unlock()

	n := len(dst)
	dst, err := c.inner.Get(deadline, dst, key)
	if err == nil {
		sh.fill(key, dst[n:], gen)
	}
	return dst, err
}

// fill caches value under key if no write to the shard has ended since
// gen was read.
func (sh *rowShard) fill(key, value []byte, gen uint64) {
	k := string(key)
	v := append([]byte(nil), value...) // the cache's own copy, allocated outside the lock
	if cost(k, v) > sh.capacity/4 {
		return
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.gen != gen {
		// A write ended while the value was read: it may be older than
		// that write. The next read fills.
		sh.dropped++
		return
	}
	if sh.lru.Contains(k) {
		// Filled by another read under the same gen: no write has ended
		// since, so it is as new as this one.
		return
	}
	sh.lru.Add(k, v)
	sh.bytes += cost(k, v)
	for sh.bytes > sh.capacity {
		sh.lru.RemoveOldest()
		sh.evictions++
	}
}

// invalidate drops key's entry and marks a write to its shard as ended;
// the caller's write to the wrapped store has returned.
func (c *RowCache) invalidate(key []byte) {
	sh := c.shard(key)
	sh.mu.Lock()
	sh.gen++
	sh.lru.Remove(lookup(key))
	sh.mu.Unlock()
}

// Put implements Store.
func (c *RowCache) Put(deadline int64, key, value []byte) error {
	err := c.inner.Put(deadline, key, value)
	c.invalidate(key)
	return err
}

// Delete implements Store.
func (c *RowCache) Delete(deadline int64, key []byte) error {
	err := c.inner.Delete(deadline, key)
	c.invalidate(key)
	return err
}

// Close implements Store: it closes the store it wraps.
func (c *RowCache) Close() error { return c.inner.Close() }

// RowCacheStats is a snapshot of a RowCache's counters.
type RowCacheStats struct {
	Hits      uint64 // Gets answered from the cache
	Misses    uint64 // Gets that read the wrapped store
	Evictions uint64 // entries dropped to stay within the bound (not those a write removed)
	Dropped   uint64 // fills not made because a write to the shard ended during the read
	Entries   int    // entries now
	Bytes     int64  // bytes charged for them now
	Capacity  int64  // the bound in bytes
}

// Stats returns a snapshot, taking each shard's lock in turn; the metrics
// package reads it at scrape time.
func (c *RowCache) Stats() RowCacheStats {
	var s RowCacheStats
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		s.Hits += sh.hits
		s.Misses += sh.misses
		s.Evictions += sh.evictions
		s.Dropped += sh.dropped
		s.Entries += sh.lru.Len()
		s.Bytes += sh.bytes
		s.Capacity += sh.capacity
		sh.mu.Unlock()
	}
	return s
}
