package store

import (
	"log/slog"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/kvpool/kvpool/internal/mono"
)

// PebbleMetrics are Pebble's own metrics and the write stalls it reported,
// which its metrics do not count.
type PebbleMetrics struct {
	*pebble.Metrics
	// WriteStalls counts the times Pebble held every write back (too many
	// memtables waiting to flush, or too many L0 sublevels: writes outran
	// flushes and compactions); WriteStallTime is how long they lasted
	// together, one under way included.
	WriteStalls    uint64
	WriteStallTime time.Duration
	// SyncedReads counts the GETs that waited for a WAL sync before
	// answering, because a write to a key of their stripe was in flight
	// (with Sync only; see Pebble.Get).
	SyncedReads uint64
	// Thresholds are where this store's Pebble stalls writes and starts
	// compacting L0, from its options: what its state is measured against.
	Thresholds Thresholds
}

// Thresholds are a Pebble store's write-stall points.
type Thresholds struct {
	// MemTableSize is one memtable's size; the store stalls writes once
	// its memtables take MemTableStallBytes and the one being written is
	// full (Pebble's MemTableStopWritesThreshold × MemTableSize).
	MemTableSize, MemTableStallBytes uint64
	// L0CompactSublevels is where compactions out of L0 begin,
	// L0StallSublevels where writes stall (Pebble's L0CompactionThreshold
	// and L0StopWritesThreshold).
	L0CompactSublevels, L0StallSublevels int
}

// writeStalls follows Pebble's write stall events: they come one at a
// time, a begin then its end, from Pebble's goroutines.
type writeStalls struct {
	log *slog.Logger
	now func() int64 // mono's scale; a test's clock

	mu    sync.Mutex
	count uint64
	total time.Duration
	since int64 // when the stall under way began; 0: none
}

func newWriteStalls(log *slog.Logger) *writeStalls {
	return &writeStalls{log: log, now: mono.Now}
}

func (w *writeStalls) begin(info pebble.WriteStallBeginInfo) {
	w.mu.Lock()
	w.count++
	w.since = w.now()
	w.mu.Unlock()
	w.log.Warn("store: Pebble holds writes back until flushes and compactions catch up", "reason", info.Reason)
}

func (w *writeStalls) end() {
	w.mu.Lock()
	var d time.Duration
	if w.since != 0 {
		d = time.Duration(w.now() - w.since)
		w.total += d
		w.since = 0
	}
	w.mu.Unlock()
	w.log.Info("store: Pebble lets writes through again", "stalled", d)
}

// read returns the stalls so far and their total length, counting one
// under way up to now.
func (w *writeStalls) read() (uint64, time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	total := w.total
	if w.since != 0 {
		total += time.Duration(w.now() - w.since)
	}
	return w.count, total
}

// listener is what Pebble is given to report the stalls.
func (w *writeStalls) listener() *pebble.EventListener {
	return &pebble.EventListener{WriteStallBegin: w.begin, WriteStallEnd: w.end}
}
