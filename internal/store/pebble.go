package store

import (
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
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
	// (cmd/crashtest measured 0-27 per kill), power loss more.
	Sync bool
	// CacheBytes sizes the block cache; 0 means 64 MiB.
	CacheBytes int64
	// Logger receives Pebble's own log lines; nil means slog.Default().
	Logger *slog.Logger
}

// DefaultCacheBytes is the block cache size when Options.CacheBytes is 0.
const DefaultCacheBytes = 64 << 20

// Pebble is a Store on a Pebble database.
type Pebble struct {
	db    *pebble.DB
	write *pebble.WriteOptions
}

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
	cache := pebble.NewCache(opts.CacheBytes)
	defer cache.Unref() // the DB holds its own reference

	po := &pebble.Options{
		Cache: cache,
		// A new store gets the newest stable on-disk format; an older store
		// is ratcheted up on open.
		FormatMajorVersion: pebble.FormatNewest,
		// A larger memtable batches more writes per flush; PUT-heavy loads
		// otherwise stall on L0 compactions.
		MemTableSize: 64 << 20,
		Logger:       pebbleLogger{opts.Logger},
	}
	for i := range po.Levels {
		// Bloom filters let a GET of an absent key skip the data blocks.
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	db, err := pebble.Open(opts.Dir, po)
	if err != nil {
		return nil, fmt.Errorf("cannot open store at %q: %w; is another kvserver using it?", opts.Dir, err)
	}
	write := pebble.NoSync
	if opts.Sync {
		write = pebble.Sync
	}
	return &Pebble{db: db, write: write}, nil
}

// Get implements Store. Pebble's value is valid only until its closer is
// closed, so it is appended to dst before that.
func (s *Pebble) Get(dst, key []byte) ([]byte, error) {
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return dst, ErrNotFound
	}
	if err != nil {
		return dst, err
	}
	dst = append(dst, v...)
	return dst, closer.Close()
}

// Put implements Store.
func (s *Pebble) Put(key, value []byte) error { return s.db.Set(key, value, s.write) }

// Delete implements Store.
func (s *Pebble) Delete(key []byte) error { return s.db.Delete(key, s.write) }

// Close implements Store.
func (s *Pebble) Close() error { return s.db.Close() }

// Metrics returns Pebble's counters; the metrics package reads them at
// scrape time.
func (s *Pebble) Metrics() *pebble.Metrics { return s.db.Metrics() }

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
