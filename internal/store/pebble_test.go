package store

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func openTemp(t *testing.T, dir string) *Pebble {
	t.Helper()
	s, err := Open(Options{Dir: dir, CacheBytes: 8 << 20})
	require.NoError(t, err)
	return s
}

func TestPebbleRoundTrip(t *testing.T) {
	s := openTemp(t, t.TempDir())
	defer s.Close()

	f := func(key, value []byte) {
		t.Helper()
		require.NoError(t, s.Put(0, key, value))
		got, err := s.Get(0, nil, key)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(value, got), "key %q: got %d bytes, want %d", key, len(got), len(value))
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	f([]byte("k"), []byte("v"))
	f([]byte("empty"), []byte{})
	f(all, all)
	f([]byte("big"), bytes.Repeat([]byte("x"), 512<<10))

	_, err := s.Get(0, nil, []byte("absent"))
	assert.ErrorIs(t, err, ErrNotFound)
	require.NoError(t, s.Delete(0, []byte("k")))
	_, err = s.Get(0, nil, []byte("k"))
	assert.ErrorIs(t, err, ErrNotFound)
	require.NoError(t, s.Delete(0, []byte("never-existed")))
}

// TestPebbleGetAppends: Get appends to dst and the result does not alias
// Pebble's memory (a later write must not change it).
func TestPebbleGetAppends(t *testing.T) {
	s := openTemp(t, t.TempDir())
	defer s.Close()
	require.NoError(t, s.Put(0, []byte("a"), []byte("one")))
	got, err := s.Get(0, []byte("prefix:"), []byte("a"))
	require.NoError(t, err)
	require.NoError(t, s.Put(0, []byte("a"), []byte("two")))
	assert.Equal(t, "prefix:one", string(got))
}

func TestPebblePersistsAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	s := openTemp(t, dir)
	require.NoError(t, s.Put(0, []byte("kept"), []byte("value")))
	require.NoError(t, s.Close())

	s = openTemp(t, dir)
	defer s.Close()
	got, err := s.Get(0, nil, []byte("kept"))
	require.NoError(t, err)
	assert.Equal(t, "value", string(got))
}

func TestPebbleDirInUse(t *testing.T) {
	dir := t.TempDir()
	s := openTemp(t, dir)
	defer s.Close()
	_, err := Open(Options{Dir: dir})
	require.Error(t, err)
	assert.Contains(t, err.Error(), dir)
	assert.Contains(t, err.Error(), "another kvserver")
}

func TestOpenNeedsDir(t *testing.T) {
	_, err := Open(Options{})
	assert.Error(t, err)
}

// TestPebbleOptions: every tuning option opens a working store and takes
// effect: the compression chosen is what Pebble used for its tables, value
// separation writes blob files, and options Pebble would refuse are errors
// that say why.
func TestPebbleOptions(t *testing.T) {
	value := bytes.Repeat([]byte("compressible "), 40) // 520 B
	f := func(opts Options, check func(t *testing.T, m *pebble.Metrics)) {
		t.Helper()
		opts.Dir, opts.CacheBytes = t.TempDir(), 8<<20
		s, err := Open(opts)
		require.NoError(t, err)
		defer s.Close()
		for i := range 100 {
			require.NoError(t, s.Put(0, fmt.Appendf(nil, "key%03d", i), value))
		}
		require.NoError(t, s.db.Flush())
		got, err := s.Get(0, nil, []byte("key042"))
		require.NoError(t, err)
		require.Equal(t, value, got)
		check(t, s.Metrics().Metrics)
	}
	f(Options{Compression: CompressionNone}, func(t *testing.T, m *pebble.Metrics) {
		assert.Positive(t, m.Table.CompressedCountNone)
		assert.Zero(t, m.Table.CompressedCountSnappy)
	})
	f(Options{}, func(t *testing.T, m *pebble.Metrics) { // snappy, Pebble's default
		assert.Positive(t, m.Table.CompressedCountSnappy)
	})
	f(Options{Compression: CompressionZstd}, func(t *testing.T, m *pebble.Metrics) {
		assert.Positive(t, m.Table.CompressedCountZstd)
	})
	f(Options{Compression: CompressionMinLZ}, func(t *testing.T, m *pebble.Metrics) {
		assert.Positive(t, m.Table.CompressedCountMinLZ)
	})
	f(Options{ValueSeparationMinBytes: 256}, func(t *testing.T, m *pebble.Metrics) {
		assert.Positive(t, m.BlobFiles.LiveCount, "values of 520 B >= 256 go to blob files")
	})
	f(Options{ValueSeparationMinBytes: 4096}, func(t *testing.T, m *pebble.Metrics) {
		assert.Zero(t, m.BlobFiles.LiveCount, "values under the minimum stay in the sstables")
	})
	f(Options{MemTableBytes: 1 << 20, L0CompactionThreshold: 2, L0StopWritesThreshold: 20}, func(*testing.T, *pebble.Metrics) {})

	th := func(opts Options) Thresholds {
		t.Helper()
		opts.Dir = t.TempDir()
		s, err := Open(opts)
		require.NoError(t, err)
		defer s.Close()
		return s.Metrics().Thresholds
	}
	assert.Equal(t, uint64(2<<20), th(Options{MemTableBytes: 1 << 20}).MemTableStallBytes, "Pebble's default: two memtables")
	assert.Equal(t, uint64(4<<20), th(Options{MemTableBytes: 1 << 20, MemTableStopWrites: 4}).MemTableStallBytes)

	_, err := Open(Options{Dir: t.TempDir(), L0CompactionThreshold: 8, L0StopWritesThreshold: 4})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "L0StopWritesThreshold")
	_, err = Open(Options{Dir: t.TempDir(), Compression: "lz4"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"lz4"`)
}

func TestParseCompression(t *testing.T) {
	for _, c := range Compressions {
		got, err := ParseCompression(string(c))
		require.NoError(t, err)
		assert.Equal(t, c, got)
	}
	_, err := ParseCompression("gzip")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "snappy")
}

func TestPebbleCompactOnOpenMovesTheMemtableIntoSSTables(t *testing.T) {
	dir := t.TempDir()
	s := openTemp(t, dir)
	for i := range 100 {
		require.NoError(t, s.Put(0, []byte(fmt.Sprintf("id%03d", i)), []byte("v")))
	}
	require.NoError(t, s.Close())

	c, err := Open(Options{Dir: dir, CompactOnOpen: true})
	require.NoError(t, err)
	defer c.Close()
	m := c.Metrics()
	assert.Zero(t, m.Levels[0].TablesCount, "nothing left in L0")
	var tables int64
	for _, l := range m.Levels {
		tables += l.TablesCount
	}
	assert.Positive(t, tables, "the keys are in sstables")
	for _, id := range []string{"id000", "id099"} {
		got, err := c.Get(0, nil, []byte(id))
		require.NoError(t, err, id)
		assert.Equal(t, "v", string(got), id)
	}

	empty, err := Open(Options{Dir: t.TempDir(), CompactOnOpen: true})
	require.NoError(t, err, "an empty store opens: nothing to compact")
	require.NoError(t, empty.Close())
}

// TestPebbleSyncedReadWaitsForWAL: with Sync, a Get of a key whose stripe
// has a write in flight appends a synced record to the WAL before it
// answers (so nothing it could have read is lost to kill -9), and one
// whose stripe has none reads only; without Sync no Get touches the WAL.
// The write in flight is stood in for by the stripe's count, as a Put
// holds it between its call into Pebble and Pebble's return.
func TestPebbleSyncedReadWaitsForWAL(t *testing.T) {
	walBytes := func(s *Pebble) uint64 { return s.Metrics().WAL.BytesWritten }
	s, err := Open(Options{Dir: t.TempDir(), Sync: true})
	require.NoError(t, err)
	defer s.Close()
	key, other := []byte("k"), []byte("other")
	for i := 0; s.writing.of(key) == s.writing.of(other); i++ { // stripes are seeded per store
		other = fmt.Appendf(nil, "other-%d", i)
	}
	require.NotSame(t, s.writing.of(key), s.writing.of(other), "the test needs two keys in two stripes")
	require.NoError(t, s.Put(0, key, []byte("v1")))

	before := walBytes(s)
	got, err := s.Get(0, nil, key)
	require.NoError(t, err)
	assert.Equal(t, "v1", string(got))
	assert.Equal(t, before, walBytes(s), "no write in flight: the read touches no WAL")
	assert.Zero(t, s.Metrics().SyncedReads)

	s.writing.of(key).Add(1) // a write to key's stripe in flight
	got, err = s.Get(0, nil, key)
	require.NoError(t, err)
	assert.Equal(t, "v1", string(got))
	assert.Greater(t, walBytes(s), before, "a write in flight: the read appended a synced record")
	assert.EqualValues(t, 1, s.Metrics().SyncedReads)

	_, err = s.Get(0, nil, other)
	assert.ErrorIs(t, err, ErrNotFound, "a read of another stripe's absent key")
	assert.EqualValues(t, 1, s.Metrics().SyncedReads, "another stripe's read does not wait")
	s.writing.of(key).Add(-1)

	u, err := Open(Options{Dir: t.TempDir()})
	require.NoError(t, err)
	defer u.Close()
	require.NoError(t, u.Put(0, key, []byte("v1")))
	assert.Nil(t, u.writing, "without Sync writes in flight are not counted")
	before = walBytes(u)
	_, err = u.Get(0, nil, key)
	require.NoError(t, err)
	assert.Equal(t, before, walBytes(u))
	assert.Zero(t, u.Metrics().SyncedReads)
}
