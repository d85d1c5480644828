package server

import (
	"log/slog"
	"math"
	"sync/atomic"
	"time"

	"github.com/kvpool/kvpool/internal/ioload"
	"github.com/kvpool/kvpool/internal/metrics"
	"github.com/kvpool/kvpool/internal/mono"
	"github.com/kvpool/kvpool/internal/pool"
	"github.com/kvpool/kvpool/internal/store"
)

// ioWatchEvery is how often the store's state is read to pace writes: a
// write flood on a small machine fills a 64 MiB memtable in under a
// second, so a tenth of a second is a few MiB of writes between looks.
// Reading Pebble's metrics takes its locks briefly; ten times a second
// is nothing beside the requests.
const ioWatchEvery = 100 * time.Millisecond

// ioWatch paces a pool's writes (pool.Pacer) by the store's health: each
// tick it reads Pebble's state, asks the ioload controller how fast
// writes may enter, and sets that rate on the pool. It keeps what it
// decided for /metrics.
type ioWatch struct {
	pacer   pool.Pacer
	read    func() store.PebbleMetrics
	ctrl    *ioload.Controller
	log     *slog.Logger
	lastAt  int64
	last    ioload.Decision // the previous tick's
	overld  atomic.Uint64   // math.Float64bits of the last Decision.Overload
	pacedNs [3]atomic.Int64 // time paced, by ioload.Cause (None unused)

	// An episode of pacing runs from its first paced tick to the last
	// one before ioQuiet without any: the log says when one begins and
	// when it has ended, not every tick a memtable's flush comes and goes.
	episodeFrom, pacedLast int64 // 0: no episode
}

// ioQuiet is how long writes must have gone unpaced before the log says
// an episode of pacing ended.
const ioQuiet = 5 * time.Second

func newIOWatch(p pool.Pacer, read func() store.PebbleMetrics, log *slog.Logger) *ioWatch {
	return &ioWatch{pacer: p, read: read, ctrl: ioload.New(), log: log, last: ioload.Decision{Rate: math.Inf(1)}}
}

// run ticks once per every (the server: ioWatchEvery), and at once when
// flushes receives (a memtable began or stopped waiting: the moments the
// memtables' pacing changes), until stop is closed; then it lifts the
// rate. A nil flushes never receives.
func (w *ioWatch) run(stop, flushes <-chan struct{}, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			w.pacer.SetWriteRate(math.Inf(1))
			return
		case <-t.C:
			w.tick(mono.Now())
		case <-flushes:
			w.tick(mono.Now())
		}
	}
}

// tick reads the store at (mono ns), decides and sets the write rate.
func (w *ioWatch) tick(at int64) ioload.Decision {
	d := w.ctrl.Tick(at, sampleOf(w.read()))
	w.pacer.SetWriteRate(d.Rate)
	w.overld.Store(math.Float64bits(d.Overload))
	if w.lastAt != 0 && w.last.Paced() {
		w.pacedNs[w.last.Cause].Add(at - w.lastAt)
	}
	switch {
	case d.Paced() && w.episodeFrom == 0:
		w.episodeFrom = at
		w.log.Info("admission: writes paced to what the store's flushes and compactions absorb",
			"cause", d.Cause.String(), "bytes_per_second", int64(d.Rate), "overload", d.Overload)
	case !d.Paced() && w.episodeFrom != 0 && at-w.pacedLast >= int64(ioQuiet):
		w.log.Info("admission: the store keeps up; writes no longer paced",
			"episode", time.Duration(w.pacedLast-w.episodeFrom).Round(time.Millisecond), "overload", d.Overload)
		w.episodeFrom = 0
	}
	if d.Paced() {
		w.pacedLast = at
	}
	w.last, w.lastAt = d, at
	return d
}

// state is what /metrics shows of the pacing's signal.
func (w *ioWatch) state() metrics.IOState {
	return metrics.IOState{
		Overload:       math.Float64frombits(w.overld.Load()),
		MemTablesPaced: time.Duration(w.pacedNs[ioload.MemTables].Load()),
		L0Paced:        time.Duration(w.pacedNs[ioload.L0].Load()),
	}
}

// sampleOf is the controller's view of a Pebble store.
func sampleOf(m store.PebbleMetrics) ioload.Sample {
	l0 := m.Levels[0]
	th := m.Thresholds
	return ioload.Sample{
		MemTableBytes:      m.MemTable.Size,
		MemTableSize:       th.MemTableSize,
		MemTableStallBytes: th.MemTableStallBytes,
		L0Sublevels:        int(l0.Sublevels),
		L0CompactSublevels: th.L0CompactSublevels,
		L0StallSublevels:   th.L0StallSublevels,
		L0Bytes:            l0.TablesSize,
		L0AddedBytes:       l0.TableBytesFlushed + l0.TableBytesIngested,
		FlushedBytes:       m.Flush.WriteThroughput.Bytes,
		FlushWork:          m.Flush.WriteThroughput.WorkDuration,
		Stalls:             m.WriteStalls,
		WrittenBytes:       m.WAL.BytesIn,
		Flushes:            m.Flush.Count,
	}
}
