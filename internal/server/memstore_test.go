package server

import (
	"sync"

	"github.com/kvpool/kvpool/internal/store"
)

// memStore is a store.Store in a map: a server for tests that are about
// HTTP, not about Pebble.
type memStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

var _ store.Store = (*memStore)(nil)

func newMemStore() *memStore { return &memStore{m: map[string][]byte{}} }

func (s *memStore) Get(_ int64, dst, key []byte) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[string(key)]
	if !ok {
		return dst, store.ErrNotFound
	}
	return append(dst, v...), nil
}

func (s *memStore) Put(_ int64, key, value []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[string(key)] = append([]byte(nil), value...)
	return nil
}

func (s *memStore) Delete(_ int64, key []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, string(key))
	return nil
}

func (s *memStore) Close() error { return nil }
