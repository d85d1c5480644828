package server

import (
	"bytes"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/ioload"
	"github.com/kvpool/kvpool/internal/pool"
	"github.com/kvpool/kvpool/internal/store"
)

// TestIOWatchClosesAndReopensWriteAdmission: the default pool's writes
// are paced by what stand-in Pebble metrics say, tick by tick on a
// simulated clock: free while one memtable is in use, held to the flush
// rate (times its fraction) once a second waits for its flush, free
// again once it has flushed, held near what leaves L0 while L0 is deep;
// the transitions are logged and /metrics' state follows. Running, it
// also looks at the store when a flush begins or ends.
func TestIOWatchClosesAndReopensWriteAdmission(t *testing.T) {
	const mib = 1 << 20
	p, err := pool.New(pool.Auto, pool.Config{Capacity: 16})
	require.NoError(t, err)
	defer p.Close()
	pacer := p.(pool.Pacer)

	m := &pebble.Metrics{}
	m.MemTable.Size = 64 * mib
	m.Levels[0].Sublevels = 1
	read := func() store.PebbleMetrics {
		return store.PebbleMetrics{Metrics: m, Thresholds: store.Thresholds{
			MemTableSize: 64 * mib, MemTableStallBytes: 128 * mib, L0CompactSublevels: 4, L0StallSublevels: 12,
		}}
	}
	var logged bytes.Buffer
	w := newIOWatch(pacer, read, slog.New(slog.NewTextHandler(&logged, nil)))
	at := int64(time.Hour)
	tick := func() ioload.Decision {
		at += int64(ioWatchEvery)
		return w.tick(at)
	}

	tick()
	tick()
	assert.False(t, pacer.Pace().Paced(), "one memtable: writes are free")

	m.Flush.WriteThroughput.Bytes = 64 * mib
	m.Flush.WriteThroughput.WorkDuration = 500 * time.Millisecond // 128 MiB/s
	m.MemTable.Size = 128 * mib                                   // the second memtable: the first waits
	d := tick()
	assert.Equal(t, ioload.MemTables, d.Cause)
	assert.True(t, pacer.Pace().Paced(), "a memtable waits: writes are held")
	assert.InDelta(t, 0.6*128*mib, pacer.Pace().Rate, 1)
	assert.Equal(t, 1.0, w.state().Overload)
	assert.Contains(t, logged.String(), "writes paced to what the store's flushes and compactions absorb")

	m.MemTable.Size = 64 * mib
	tick()
	assert.False(t, pacer.Pace().Paced(), "flushed: writes are free again")
	assert.Equal(t, ioWatchEvery, w.state().MemTablesPaced)
	assert.NotContains(t, logged.String(), "no longer paced", "an episode ends after ioQuiet without pacing")
	for range int(ioQuiet / ioWatchEvery) {
		tick()
	}
	assert.Contains(t, logged.String(), "writes no longer paced")
	assert.Equal(t, 1, strings.Count(logged.String(), "writes paced to"), "one episode, logged once")

	m.Levels[0].Sublevels = 8
	d = tick()
	assert.Equal(t, ioload.L0, d.Cause)
	assert.InDelta(t, 128*mib/2, pacer.Pace().Rate, 1, "half the flush rate stands in for what leaves L0; all of it at 8 of 12")
	tick()
	assert.Equal(t, ioWatchEvery, w.state().L0Paced)

	// Running, it ticks when a flush begins or ends, not only on time.
	reads := make(chan struct{}, 1)
	readNow := w.read
	w.read = func() store.PebbleMetrics {
		reads <- struct{}{}
		return readNow()
	}
	flushes := make(chan struct{})
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { w.run(stop, flushes, time.Hour); close(done) }()
	flushes <- struct{}{}
	<-reads
	close(stop)
	<-done
	assert.True(t, math.IsInf(pacer.Pace().Rate, 1), "a stopped watch leaves writes free")
}
