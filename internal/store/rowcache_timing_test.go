package store

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// BenchmarkRowCacheHit: GETs answered from a warm row cache, from every
// goroutine at once, over 100,000 keys of 500 B (all cached): the cost of
// a hit and of the shard locks as CPUs are added.
//
//	go test -run '^$' -bench BenchmarkRowCacheHit -cpu 1,2,4,8 ./internal/store/
func BenchmarkRowCacheHit(b *testing.B) {
	const keys = 100_000
	s := newMapStore()
	c := NewRowCache(s, 256<<20, RowCacheOptions{})
	ids := make([][]byte, keys)
	for i := range ids {
		ids[i] = strconv.AppendInt(nil, int64(i), 10)
		s.m[string(ids[i])] = make([]byte, benchValueSize)
		if _, err := c.Get(0, nil, ids[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		r := rand.New(rand.NewPCG(rand.Uint64(), 0))
		buf := make([]byte, 0, benchValueSize)
		for pb.Next() {
			var err error
			if buf, err = c.Get(0, buf[:0], ids[r.IntN(keys)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	if st := c.Stats(); st.Misses != keys {
		b.Fatalf("%d misses after the fill, want none", st.Misses-keys)
	}
}

// BenchmarkRowCachePut: PUTs through the row cache to a store that does
// nothing, from every goroutine at once, over 100,000 keys: what the cache
// adds to a write (its shard's lock, taken as the write begins and again as
// it ends, and the removal of the key), apart from the store's own cost.
//
//	go test -run '^$' -bench BenchmarkRowCachePut -cpu 1,2,4,8 ./internal/store/
func BenchmarkRowCachePut(b *testing.B) {
	const keys = 100_000
	c := NewRowCache(nopStore{}, 256<<20, RowCacheOptions{})
	ids := make([][]byte, keys)
	for i := range ids {
		ids[i] = strconv.AppendInt(nil, int64(i), 10)
	}
	value := make([]byte, benchValueSize)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		r := rand.New(rand.NewPCG(rand.Uint64(), 0))
		for pb.Next() {
			if err := c.Put(0, ids[r.IntN(keys)], value); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// nopStore is a Store that keeps nothing: Get finds nothing, writes do
// nothing.
type nopStore struct{}

func (nopStore) Get(_ int64, dst, _ []byte) ([]byte, error) { return dst, ErrNotFound }
func (nopStore) Put(int64, []byte, []byte) error            { return nil }
func (nopStore) Delete(int64, []byte) error                 { return nil }
func (nopStore) Close() error                               { return nil }
