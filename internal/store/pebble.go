package store

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
)

// Options configures a Pebble store.
type Options struct {
	// Dir holds the data; it is created if missing.
	Dir string
	// Sync makes every write wait until its WAL record is fsynced: an
	// acknowledged write then survives kill -9 and, if the disk honours
	// fsync, power loss. Concurrent synced writes share fsyncs (Pebble's
	// group commit). Without Sync a write is acknowledged while its WAL
	// record may still be in Pebble's in-process log buffer, handed to the
	// OS asynchronously: kill -9 can lose the last few acknowledged writes
	// (cmd/crashtest counts them; docs/guarantees.md, Durability, says
	// what it found), power loss more.
	//
	// With Sync a read also never returns a value that is not yet durable:
	// Pebble makes a write visible once it is in the memtable, before its
	// WAL record is written out, so a GET overlapping a PUT of the same
	// key could return a value that kill -9 then loses, and a later GET
	// would see the older one. A GET that may have seen such a write
	// waits for the WAL to be synced first (see Get).
	Sync bool
	// CacheBytes sizes the block cache; 0 means 64 MiB.
	CacheBytes int64
	// Logger receives Pebble's own log lines; nil means slog.Default().
	Logger *slog.Logger

	// The rest tune Pebble's write path; each zero value keeps the default
	// named beside it.

	// Compression is the block compression of every level; "" means
	// CompressionSnappy, Pebble's own default. Random values do not
	// compress: Pebble then stores the block as is, but only after paying
	// for the attempt at every flush and compaction.
	Compression Compression
	// MemTableBytes is the size of one memtable; 0 means
	// DefaultMemTableBytes. A larger memtable batches more writes per flush
	// (fewer, larger L0 files, less compaction work per byte) at the cost of
	// memory (up to MemTableStopWrites times this while flushes run behind)
	// and a longer WAL replay after a crash.
	MemTableBytes int64
	// MemTableStopWrites is how many memtables' worth of bytes, the one
	// being written included, may wait for their flushes before writes
	// stall; 0 means Pebble's default of 2 (a stall whenever the memtable
	// being written fills before the one ahead of it has flushed). More
	// lets a flush that runs slower than the ones before it be absorbed by
	// one more memtable instead of a stall, at the cost of that memory.
	MemTableStopWrites int
	// L0CompactionThreshold is the L0 read amplification (sub-level count)
	// at which an L0 compaction starts; 0 means Pebble's default of 4.
	// Higher defers compaction work (fewer, larger compactions) at the cost
	// of reads that look at more L0 files.
	L0CompactionThreshold int
	// L0StopWritesThreshold is the L0 read amplification at which writes
	// stall until compactions catch up; 0 means Pebble's default of 12. It
	// must not be below L0CompactionThreshold.
	L0StopWritesThreshold int
	// ValueSeparationMinBytes, when positive, moves values of at least this
	// many bytes out of the sstables into blob files when memtables are
	// flushed, so compactions move keys and references, not the values
	// themselves (Pebble's value separation, FormatValueSeparation); 0 means
	// off. A GET of a separated value reads one more block.
	ValueSeparationMinBytes int

	// CompactOnOpen flushes the memtable and compacts every key into
	// sstables before Open returns, so that reads find their data in
	// sstables rather than in the memtable a recent fill left it in (the
	// state a store settles into once written long enough ago). Open then
	// takes about as long as rewriting the store once.
	CompactOnOpen bool
}

// DefaultCacheBytes is the block cache size when Options.CacheBytes is 0.
const DefaultCacheBytes = 64 << 20

// DefaultMemTableBytes is the memtable size when Options.MemTableBytes is 0.
const DefaultMemTableBytes = 64 << 20

// MaxMemTableBytes is the largest memtable Pebble accepts (its limit is
// 4 GiB, exclusive).
const MaxMemTableBytes = 4<<30 - 1

// Compression names a block compression for Options.Compression.
type Compression string

const (
	CompressionNone   Compression = "none"
	CompressionSnappy Compression = "snappy"
	CompressionMinLZ  Compression = "minlz"
	CompressionZstd   Compression = "zstd"
)

// Compressions lists the names ParseCompression accepts.
var Compressions = []Compression{CompressionNone, CompressionSnappy, CompressionMinLZ, CompressionZstd}

// ParseCompression parses a compression name as -compression takes it.
func ParseCompression(s string) (Compression, error) {
	for _, c := range Compressions {
		if s == string(c) {
			return c, nil
		}
	}
	return "", fmt.Errorf("unknown compression %q; want one of %v", s, Compressions)
}

func (c Compression) profile() (*sstable.CompressionProfile, error) {
	switch c {
	case CompressionNone:
		return sstable.NoCompression, nil
	case CompressionSnappy, "":
		return sstable.SnappyCompression, nil
	case CompressionMinLZ:
		return sstable.MinLZCompression, nil
	case CompressionZstd:
		return sstable.ZstdCompression, nil
	}
	return nil, fmt.Errorf("store: unknown compression %q; want one of %v", string(c), Compressions)
}

// pebbleOptions translates opts (defaults applied) into Pebble's: its
// write stalls are counted by stalls, and each flush's start and end
// wakes flushes (see Pebble.FlushEvents).
func pebbleOptions(opts Options, cache *pebble.Cache, stalls *writeStalls, flushes chan struct{}) (*pebble.Options, error) {
	compression, err := opts.Compression.profile()
	if err != nil {
		return nil, err
	}
	po := &pebble.Options{
		Cache: cache,
		// A new store gets the newest stable on-disk format (value
		// separation needs it); an older store is ratcheted up on open.
		FormatMajorVersion:          pebble.FormatNewest,
		MemTableSize:                uint64(opts.MemTableBytes),
		MemTableStopWritesThreshold: opts.MemTableStopWrites,
		L0CompactionThreshold:       opts.L0CompactionThreshold,
		L0StopWritesThreshold:       opts.L0StopWritesThreshold,
		Logger:                      pebbleLogger{opts.Logger},
		EventListener:               stalls.listener(),
	}
	wake := func(pebble.FlushInfo) {
		select {
		case flushes <- struct{}{}:
		default: // one wake-up pending is enough
		}
	}
	po.EventListener.FlushBegin, po.EventListener.FlushEnd = wake, wake
	for i := range po.Levels {
		// Bloom filters let a GET of an absent key skip the data blocks.
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		po.Levels[i].Compression = func() *sstable.CompressionProfile { return compression }
	}
	if minBytes := opts.ValueSeparationMinBytes; minBytes > 0 {
		policy := pebble.ValueSeparationPolicy{
			Enabled:     true,
			MinimumSize: minBytes,
			// At most 10 overlapping blob files per sstable before a
			// compaction rewrites the values (Pebble's own benchmark tool's
			// choice). Overwritten values leave garbage in blob files that
			// compactions never see: once a blob file older than 5 minutes
			// is a fifth garbage it is rewritten, so an overwrite-heavy
			// store's disk use stays bounded, at the price of that write.
			MaxBlobReferenceDepth: 10,
			RewriteMinimumAge:     5 * time.Minute,
			TargetGarbageRatio:    0.2,
		}
		po.Experimental.ValueSeparationPolicy = func() pebble.ValueSeparationPolicy { return policy }
	}
	po.EnsureDefaults()
	if err := po.Validate(); err != nil {
		return nil, fmt.Errorf("store: invalid Pebble options: %w", err)
	}
	return po, nil
}

// Pebble is a Store on a Pebble database.
type Pebble struct {
	db         *pebble.DB
	write      *pebble.WriteOptions
	stalls     *writeStalls
	flushes    chan struct{}
	thresholds Thresholds
	// writing counts each key stripe's writes in flight, with Sync only
	// (nil without): a Get of a key whose stripe has one waits for the
	// WAL sync before it returns (see Get).
	writing     *writesInFlight
	syncedReads atomic.Uint64
}

// writeStripes is how many stripes writes in flight are counted in: a
// GET pays for a sync only when a write to a key of its stripe is in
// flight, so with k writes in flight a GET of a key that none of them
// writes pays with a probability of about k/writeStripes. A power of two.
const writeStripes = 4096

// writesInFlight counts writes in flight per key stripe, keys hashed as
// the row cache hashes them to its shards. Its methods take a nil
// receiver (no Sync: nothing counted) and do nothing.
type writesInFlight struct {
	seed    maphash.Seed
	stripes [writeStripes]inFlight
}

// inFlight is one stripe's count.
type inFlight struct{ atomic.Int32 }

// of is key's stripe.
func (w *writesInFlight) of(key []byte) *inFlight {
	return &w.stripes[maphash.Bytes(w.seed, key)&(writeStripes-1)]
}

// enter counts a write to key as in flight until the stripe it returns
// is left: defer w.enter(key).leave().
func (w *writesInFlight) enter(key []byte) *inFlight {
	if w == nil {
		return nil
	}
	n := w.of(key)
	n.Add(1)
	return n
}

func (n *inFlight) leave() {
	if n != nil {
		n.Add(-1)
	}
}

// busy tells whether a write to a key of key's stripe is in flight.
func (w *writesInFlight) busy(key []byte) bool { return w != nil && w.of(key).Load() > 0 }

var _ Store = (*Pebble)(nil)

// Open opens (or creates) the database in opts.Dir.
func Open(opts Options) (*Pebble, error) {
	if opts.Dir == "" {
		return nil, errors.New("store: no data directory given")
	}
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = DefaultCacheBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MemTableBytes <= 0 {
		opts.MemTableBytes = DefaultMemTableBytes
	}
	cache := pebble.NewCache(opts.CacheBytes)
	defer cache.Unref() // the DB holds its own reference

	stalls, flushes := newWriteStalls(opts.Logger), make(chan struct{}, 1)
	po, err := pebbleOptions(opts, cache, stalls, flushes)
	if err != nil {
		return nil, err
	}
	db, err := pebble.Open(opts.Dir, po)
	if err != nil {
		return nil, fmt.Errorf("cannot open store at %q: %w; is another kvserver using it?", opts.Dir, err)
	}
	if opts.CompactOnOpen {
		if err := compactAll(db); err != nil {
			db.Close()
			return nil, fmt.Errorf("cannot compact store at %q: %w", opts.Dir, err)
		}
	}
	write := pebble.NoSync
	if opts.Sync {
		write = pebble.Sync
	}
	thresholds := Thresholds{
		MemTableSize:       po.MemTableSize,
		MemTableStallBytes: uint64(po.MemTableStopWritesThreshold) * po.MemTableSize,
		L0CompactSublevels: po.L0CompactionThreshold,
		L0StallSublevels:   po.L0StopWritesThreshold,
	}
	p := &Pebble{db: db, write: write, stalls: stalls, flushes: flushes, thresholds: thresholds}
	if opts.Sync {
		p.writing = &writesInFlight{seed: maphash.MakeSeed()}
	}
	return p, nil
}

// compactAll flushes db's memtable and compacts its whole key range
// (Compact flushes a memtable that overlaps the range first).
func compactAll(db *pebble.DB) error {
	it, err := db.NewIter(nil)
	if err != nil {
		return err
	}
	var first, last []byte
	if it.First() {
		first = slices.Clone(it.Key())
		if it.Last() {
			last = slices.Clone(it.Key())
		}
	}
	if err := it.Close(); err != nil {
		return err
	}
	if first == nil {
		return nil // empty: nothing to compact
	}
	// Compact's end is exclusive; last+0x00 is the least key above last.
	return db.Compact(context.Background(), first, append(last, 0), true)
}

// Get implements Store. Pebble's value is valid only until its closer is
// closed, so it is appended to dst before that. Pebble never waits for
// capacity, so it ignores the deadline, as Put and Delete do.
//
// With Sync, what must hold: a Get returns only what kill -9 cannot take
// back. Pebble publishes a write (makes it visible to reads) once it is
// applied to the memtable; its WAL record is then in the log's buffer,
// written out and synced a moment later, and only then does Set return.
// A write counts itself in its key's stripe before it calls Pebble and
// uncounts itself after Pebble returns, so a Get that saw a write whose
// Set has not returned finds the stripe's count above zero when it looks
// after reading (the count's increment happens before the write is
// published, which happens before the Get sees it). Such a Get appends a
// synced empty record to the WAL (LogData): records are written and
// synced in order, so once it returns every write the Get could have
// seen is durable. A count above zero from another key of the stripe, or
// from a write the Get did not see, costs a sync that was not needed,
// never a wrong answer.
func (s *Pebble) Get(_ int64, dst, key []byte) ([]byte, error) {
	v, closer, err := s.db.Get(key)
	if err == nil {
		dst = append(dst, v...)
		err = closer.Close()
	}
	if s.writing.busy(key) {
		s.syncedReads.Add(1)
		if serr := s.db.LogData(nil, pebble.Sync); serr != nil && (err == nil || errors.Is(err, pebble.ErrNotFound)) {
			return dst, serr
		}
	}
	if errors.Is(err, pebble.ErrNotFound) {
		return dst, ErrNotFound
	}
	return dst, err
}

// Put implements Store.
func (s *Pebble) Put(_ int64, key, value []byte) error {
	defer s.writing.enter(key).leave()
	return s.db.Set(key, value, s.write)
}

// Delete implements Store.
func (s *Pebble) Delete(_ int64, key []byte) error {
	defer s.writing.enter(key).leave()
	return s.db.Delete(key, s.write)
}

// Close implements Store.
func (s *Pebble) Close() error { return s.db.Close() }

// Metrics returns Pebble's counters, its write stalls and the thresholds
// they are measured against; the metrics package reads them at scrape
// time, the server's write pacing a few times a second.
func (s *Pebble) Metrics() PebbleMetrics {
	m := PebbleMetrics{Metrics: s.db.Metrics(), Thresholds: s.thresholds}
	m.WriteStalls, m.WriteStallTime = s.stalls.read()
	m.SyncedReads = s.syncedReads.Load()
	return m
}

// FlushEvents receives a value when a flush begins or ends (one pending
// at most, however many happened): a memtable began or stopped waiting
// for its flush. Those who pace writes by the memtables look at Metrics
// then, not a tick later.
func (s *Pebble) FlushEvents() <-chan struct{} { return s.flushes }

// pebbleLogger sends Pebble's chatter (WAL rotations, flushes) to debug and
// its errors to error.
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

// Fatalf must not return: Pebble calls it on unrecoverable corruption.
func (p pebbleLogger) Fatalf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
	os.Exit(1)
}
