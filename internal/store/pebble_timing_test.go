package store

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// The Pebble micro-benchmarks: GET and PUT of 500 B random (incompressible)
// values over a settled store of -store.keys ids, one sub-benchmark per
// candidate setting of the options kvserver exposes, so settings can be
// compared with benchstat before an end-to-end make bench-http:
//
//	go test -run '^$' -bench BenchmarkPebble -benchtime 1000000x -count 6 ./internal/store/ | tee pebble.txt
//	benchstat -col /opts pebble.txt
//
// Besides ns/op and allocs/op each reports cpu-ns/op, the process's CPU time
// (user + system) per operation over the timed loop: it includes Pebble's
// background flushes and compactions, which ns/op on an idle core misses.
// PUT's flush and compaction work shows only once a run writes several
// memtables' worth: -benchtime 1000000x writes about 500 MB, eight 64 MiB
// memtables.

var benchKeys = flag.Int("store.keys", 200_000, "ids loaded into the store the Pebble benchmarks read and overwrite")

const benchValueSize = 500

// benchSettings are the candidate option sets, by sub-benchmark name.
var benchSettings = []struct {
	name string
	opts Options
}{
	{"default", Options{}},
	{"compression=none", Options{Compression: CompressionNone}},
	{"compression=minlz", Options{Compression: CompressionMinLZ}},
	{"value-sep=256", Options{ValueSeparationMinBytes: 256}},
	{"value-sep=256,compression=none", Options{ValueSeparationMinBytes: 256, Compression: CompressionNone}},
	{"memtable=16MiB", Options{MemTableBytes: 16 << 20}},
	{"memtable=256MiB", Options{MemTableBytes: 256 << 20}},
	{"l0=8,32", Options{L0CompactionThreshold: 8, L0StopWritesThreshold: 32}},
}

// loadStore opens a store with opts in a fresh directory and loads ids
// 1..keys with random values, flushed and compacted, as a store looks after
// make fill and a quiet spell. The store and directory go at b's cleanup.
func loadStore(b *testing.B, opts Options) *Pebble {
	opts.Dir, opts.CacheBytes = b.TempDir(), 256<<20
	s, err := Open(opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })

	values := newValueSource(1)
	batch := s.db.NewBatch()
	var key []byte
	for id := 1; id <= *benchKeys; id++ {
		key = strconv.AppendInt(key[:0], int64(id), 10)
		if err := batch.Set(key, values.next(), nil); err != nil {
			b.Fatal(err)
		}
		if id%1000 == 0 || id == *benchKeys {
			if err := batch.Commit(pebble.NoSync); err != nil {
				b.Fatal(err)
			}
			batch.Reset()
		}
	}
	if err := s.db.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := s.db.Compact(b.Context(), []byte("0"), []byte(":"), true); err != nil {
		b.Fatal(err)
	}
	// One pass over every key warms the block cache, which holds the whole
	// store, so every setting's GETs start from the same state.
	it, err := s.db.NewIter(nil)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for valid := it.First(); valid; valid = it.Next() {
		n++
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil || n != *benchKeys {
		b.Fatalf("warming the cache: %d keys of %d: %v", n, *benchKeys, err)
	}
	return s
}

// valueSource hands out benchValueSize-byte windows of a random buffer:
// incompressible and different from one call to the next, without
// generating random bytes in the timed loop.
type valueSource struct {
	buf []byte
	rng *rand.Rand
}

func newValueSource(seed uint64) *valueSource {
	rng := rand.New(rand.NewPCG(seed, seed))
	buf := make([]byte, 4<<20)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	return &valueSource{buf: buf, rng: rng}
}

func (v *valueSource) next() []byte {
	off := v.rng.IntN(len(v.buf) - benchValueSize)
	return v.buf[off : off+benchValueSize]
}

// processCPU is this process's user + system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPebble: per setting, on one freshly loaded store (closed, its
// background work finished, before the next setting's is loaded, so no
// setting pays for another's compactions): GETs of stored ids as the
// server's GET path calls them (appending into a reused buffer), then PUTs
// overwriting stored ids with fresh random values, without fsync
// (kvserver's default), then GETs again over what the PUTs left behind.
func BenchmarkPebble(b *testing.B) {
	for _, setting := range benchSettings {
		b.Run("opts="+setting.name, func(b *testing.B) {
			s := loadStore(b, setting.opts)
			var dst []byte
			get := func(key []byte, _ *valueSource) {
				var err error
				if dst, err = s.Get(0, dst[:0], key); err != nil {
					b.Fatal(fmt.Errorf("get %s: %w", key, err))
				}
				if len(dst) != benchValueSize {
					b.Fatalf("get %s: %d bytes, want %d", key, len(dst), benchValueSize)
				}
			}
			benchOp(b, "get", get)
			benchOp(b, "put", func(key []byte, values *valueSource) {
				if err := s.Put(0, key, values.next()); err != nil {
					b.Fatal(fmt.Errorf("put %s: %w", key, err))
				}
			})
			// The PUTs left the memtable holding recent values (and L0
			// files, flushes and compactions in progress): every GET now
			// searches the memtable first, as in a mixed workload.
			benchOp(b, "get-after-put", get)
		})
	}
}

// benchOp runs op b.N times over random stored ids as sub-benchmark op=name.
func benchOp(b *testing.B, name string, op func(key []byte, values *valueSource)) {
	b.Run("op="+name, func(b *testing.B) {
		values := newValueSource(2)
		rng := rand.New(rand.NewPCG(3, 3))
		var key []byte
		b.ReportAllocs()
		b.SetBytes(benchValueSize)
		b.ResetTimer()
		cpu := processCPU(b)
		for range b.N {
			key = strconv.AppendInt(key[:0], int64(1+rng.IntN(*benchKeys)), 10)
			op(key, values)
		}
		b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
	})
}
