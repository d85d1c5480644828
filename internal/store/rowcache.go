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
// What must hold: linearizability per key, as the store it wraps (Pebble)
// has it. Each Get, Put and Delete appears to take effect at one moment
// between its call and its return, so once any Get has returned a value,
// no Get that starts after it returns an older one, whether a write to
// the key is in flight or not.
//
// The protocol: each shard counts its writes in flight (writing) and
// bumps gen when a write begins and when it ends, both under its lock. A
// write removes its key from the LRU and counts itself in before it
// calls the wrapped store, and removes the key again and counts itself
// out after that call returns, whatever it returned (a failed write may
// have been applied). A Get that misses notes gen, and whether writing
// was 0, under the lock before it reads the wrapped store; it fills the
// cache with what it read only if writing was 0 then and gen is unchanged
// under the lock again. So no write to the shard was in flight at any
// moment from the note to the fill, the value read was the key's value
// all that time, and it is the key's value when it is cached.
//
// The invariant that follows, given a wrapped store that is linearizable
// per key and written only through the cache: while key K is cached with
// value v, no write to K is in flight and the wrapped store holds v for K.
// A fill lands only if no write to the shard was in flight from its
// read's note to the fill, and a write to K removes K under the lock
// before it touches the store. Hence a hit linearizes at its lock, a miss
// at the wrapped store's read, a write at the wrapped store's apply.
//
// Why all three parts (the removal as a write begins, gen bumped as it
// begins, the count of writes in flight), each shown by a test that
// fails without it:
//   - gen bumped only as writes end (this cache's first protocol): a read
//     that read v1 before a write of v2 was applied fills v1 while the
//     write is in flight; another read has meanwhile read and returned
//     v2, and a hit then returns v1 (TestRowCacheInversionSlowFill).
//   - no removal as a write begins (gen bumped at both ends alone, a
//     seqlock): v1 cached before the write began stays cached while v2 is
//     applied; a read that missed earlier reads and returns v2, and a hit
//     then returns v1 (TestRowCacheInversionCachedBeforeWrite).
//   - no count of writes in flight: a read that noted gen after a write
//     began reads v1 before the apply and fills it, as no write began or
//     ended since its note (TestRowCacheInversionFillDuringWrite).
//
// Tagging each cached value with Pebble's sequence number would do as
// well, but Pebble's Get returns none (only its ScanInternal, meant for
// replication, shows them), and Put would have to learn its own: a wider
// Store interface and a costlier miss, where the two counters cost a
// second lock per write and nothing on the hit path.
//
// The cost: while any write to a shard is in flight, Gets in that shard
// that miss fill nothing (counted as Dropped: a lost fill, never a stale
// one), so a key written without pause is read from the store.
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
	gen      uint64                         // bumped as each write begins and ends; guarded by mu
	writing  int                            // writes in flight in this shard; guarded by mu
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
// reads the wrapped store and fills the cache if no write to the shard was
// in flight at any moment from before the read to the fill.
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
	gen, quiet := sh.gen, sh.writing == 0
	sh.mu.Unlock()

	n := len(dst)
	dst, err := c.inner.Get(deadline, dst, key)
	if err == nil {
		sh.fill(key, dst[n:], gen, quiet)
	}
	return dst, err
}

// fill caches value under key if no write to the shard was in flight when
// gen was read (quiet) and none has begun or ended since.
func (sh *rowShard) fill(key, value []byte, gen uint64, quiet bool) {
	if !quiet {
		// A write was in flight before the read: the value read may be
		// older than one another Get has already returned.
		sh.mu.Lock()
		sh.dropped++
		sh.mu.Unlock()
		return
	}
	k := string(key)
	v := append([]byte(nil), value...) // the cache's own copy, allocated outside the lock
	if cost(k, v) > sh.capacity/4 {
		return
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.gen != gen {
		// A write began or ended while the value was read: it may be
		// older than that write. The next read fills.
		sh.dropped++
		return
	}
	if sh.lru.Contains(k) {
		// Filled by another read: no write to the key has begun since
		// (it would have removed the entry) and none was in flight at
		// this read's note, so the entry holds the value read here.
		return
	}
	sh.lru.Add(k, v)
	sh.bytes += cost(k, v)
	for sh.bytes > sh.capacity {
		sh.lru.RemoveOldest()
		sh.evictions++
	}
}

// beginWrite removes key's entry and counts a write to its shard in;
// the caller then writes to the wrapped store and calls endWrite.
func (sh *rowShard) beginWrite(key []byte) {
	sh.mu.Lock()
	sh.writing++
	sh.gen++
	sh.lru.Remove(lookup(key))
	sh.mu.Unlock()
}

// endWrite counts the write out once the wrapped store's write has
// returned, whatever it returned. No fill can have landed while the write
// was in flight, so removing key again finds nothing; it costs a map
// lookup and keeps "gone when the write returns" true by itself.
func (sh *rowShard) endWrite(key []byte) {
	sh.mu.Lock()
	sh.lru.Remove(lookup(key))
	sh.writing--
	sh.gen++
	sh.mu.Unlock()
}

// Put implements Store.
func (c *RowCache) Put(deadline int64, key, value []byte) error {
	sh := c.shard(key)
	sh.beginWrite(key)
	err := c.inner.Put(deadline, key, value)
	sh.endWrite(key)
	return err
}

// Delete implements Store.
func (c *RowCache) Delete(deadline int64, key []byte) error {
	sh := c.shard(key)
	sh.beginWrite(key)
	err := c.inner.Delete(deadline, key)
	sh.endWrite(key)
	return err
}

// Close implements Store: it closes the store it wraps.
func (c *RowCache) Close() error { return c.inner.Close() }

// RowCacheStats is a snapshot of a RowCache's counters.
type RowCacheStats struct {
	Hits      uint64 // Gets answered from the cache
	Misses    uint64 // Gets that read the wrapped store
	Evictions uint64 // entries dropped to stay within the bound (not those a write removed)
	Dropped   uint64 // fills not made because a write to the shard was in flight, or began or ended, during the read
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
