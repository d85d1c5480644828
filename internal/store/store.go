// Package store hides the key-value engine behind a small interface. It
// knows nothing of HTTP or of the pools that call it.
package store

import "errors"

// ErrNotFound is returned by Get for a key that is absent or deleted.
var ErrNotFound = errors.New("store: key not found")

// ErrDeadline is returned by an operation that waited for capacity (see
// Bounded) until its caller's deadline passed: it gave up without touching
// the data.
var ErrDeadline = errors.New("store: the caller's deadline passed while the operation waited for capacity")

// Store is a byte-oriented key-value store, safe for concurrent use.
// Keys and values are opaque bytes; an empty value is a value.
//
// Every operation takes its caller's deadline: when the caller stops
// waiting for the answer, on the mono clock (mono.Now nanoseconds), or 0
// for never. A store that may make an operation wait for capacity (the
// finite-capacity stand-in, Bounded) gives up once the deadline passes,
// with ErrDeadline, before touching anything, as a database client's
// connection pool honours a context's deadline; Pebble, which never
// waits so, ignores it.
type Store interface {
	// Get appends the value stored under key to dst and returns the result,
	// or ErrNotFound. The result never aliases the engine's memory, so the
	// caller may keep it as long as it likes.
	Get(deadline int64, dst, key []byte) ([]byte, error)
	// Put stores value under key, replacing any previous value. The store
	// does not retain key or value after Put returns.
	Put(deadline int64, key, value []byte) error
	// Delete removes key; deleting an absent key is not an error.
	Delete(deadline int64, key []byte) error
	// Close flushes and releases the store; no method may be called after.
	Close() error
}
