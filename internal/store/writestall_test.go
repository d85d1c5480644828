package store

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWriteStallsCountAndTime: each stall Pebble reports is counted, its
// length added when it ends, and one under way is read up to now; each
// is logged with its reason and its length.
func TestWriteStallsCountAndTime(t *testing.T) {
	var logged bytes.Buffer
	w := newWriteStalls(slog.New(slog.NewTextHandler(&logged, nil)))
	now := int64(time.Hour)
	w.now = func() int64 { return now }

	n, d := w.read()
	assert.Zero(t, n)
	assert.Zero(t, d)

	w.begin(pebble.WriteStallBeginInfo{Reason: "memtable count limit reached"})
	now += int64(2 * time.Second)
	n, d = w.read()
	assert.Equal(t, uint64(1), n)
	assert.Equal(t, 2*time.Second, d, "a stall under way counts up to now")

	now += int64(time.Second)
	w.end()
	now += int64(time.Minute) // no stall: nothing added
	n, d = w.read()
	assert.Equal(t, uint64(1), n)
	assert.Equal(t, 3*time.Second, d)

	w.begin(pebble.WriteStallBeginInfo{Reason: "L0 file count limit exceeded"})
	now += int64(500 * time.Millisecond)
	w.end()
	w.end() // an end without its begin adds nothing
	n, d = w.read()
	assert.Equal(t, uint64(2), n)
	assert.Equal(t, 3500*time.Millisecond, d)

	assert.Contains(t, logged.String(), `reason="memtable count limit reached"`)
	assert.Contains(t, logged.String(), `reason="L0 file count limit exceeded"`)
	assert.Contains(t, logged.String(), "stalled=3s")
}

// TestPebbleReportsWriteStallsToTheStore: the options Pebble opens with
// carry the stall events to the store's count, and Metrics returns it
// beside Pebble's own; a flush's events wake FlushEvents.
func TestPebbleReportsWriteStallsToTheStore(t *testing.T) {
	w := newWriteStalls(slog.New(slog.DiscardHandler))
	cache := pebble.NewCache(1 << 20)
	defer cache.Unref()
	flushes := make(chan struct{}, 1)
	po, err := pebbleOptions(Options{Dir: t.TempDir(), MemTableBytes: DefaultMemTableBytes}, cache, w, flushes)
	require.NoError(t, err)
	po.EventListener.WriteStallBegin(pebble.WriteStallBeginInfo{Reason: "test"})
	po.EventListener.WriteStallEnd()
	n, _ := w.read()
	assert.Equal(t, uint64(1), n)
	po.EventListener.FlushBegin(pebble.FlushInfo{})
	po.EventListener.FlushEnd(pebble.FlushInfo{}) // coalesced with the pending one
	assert.Len(t, flushes, 1)

	s := openTemp(t, t.TempDir())
	defer s.Close()
	s.stalls.begin(pebble.WriteStallBeginInfo{Reason: "test"})
	m := s.Metrics()
	assert.Equal(t, uint64(1), m.WriteStalls)
	assert.NotNil(t, m.Metrics, "and Pebble's own metrics")

	require.NoError(t, s.Put(0, []byte("k"), []byte("v")))
	require.NoError(t, s.db.Flush())
	<-s.FlushEvents() // the flush woke whoever watches
	assert.Equal(t, int64(1), s.Metrics().Flush.Count)
}
