// Package store hides the key-value engine behind a small interface. It
// knows nothing of HTTP or of the pools that call it.
package store

import "errors"

// ErrNotFound is returned by Get for a key that is absent or deleted.
var ErrNotFound = errors.New("store: key not found")

// Store is a byte-oriented key-value store, safe for concurrent use.
// Keys and values are opaque bytes; an empty value is a value.
type Store interface {
	// Get appends the value stored under key to dst and returns the result,
	// or ErrNotFound. The result never aliases the engine's memory, so the
	// caller may keep it as long as it likes.
	Get(dst, key []byte) ([]byte, error)
	// Put stores value under key, replacing any previous value. The store
	// does not retain key or value after Put returns.
	Put(key, value []byte) error
	// Delete removes key; deleting an absent key is not an error.
	Delete(key []byte) error
	// Close flushes and releases the store; no method may be called after.
	Close() error
}
