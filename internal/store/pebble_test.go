package store

import (
	"bytes"
	"testing"

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
		require.NoError(t, s.Put(key, value))
		got, err := s.Get(nil, key)
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

	_, err := s.Get(nil, []byte("absent"))
	assert.ErrorIs(t, err, ErrNotFound)
	require.NoError(t, s.Delete([]byte("k")))
	_, err = s.Get(nil, []byte("k"))
	assert.ErrorIs(t, err, ErrNotFound)
	require.NoError(t, s.Delete([]byte("never-existed")))
}

// TestPebbleGetAppends: Get appends to dst and the result does not alias
// Pebble's memory (a later write must not change it).
func TestPebbleGetAppends(t *testing.T) {
	s := openTemp(t, t.TempDir())
	defer s.Close()
	require.NoError(t, s.Put([]byte("a"), []byte("one")))
	got, err := s.Get([]byte("prefix:"), []byte("a"))
	require.NoError(t, err)
	require.NoError(t, s.Put([]byte("a"), []byte("two")))
	assert.Equal(t, "prefix:one", string(got))
}

func TestPebblePersistsAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	s := openTemp(t, dir)
	require.NoError(t, s.Put([]byte("kept"), []byte("value")))
	require.NoError(t, s.Close())

	s = openTemp(t, dir)
	defer s.Close()
	got, err := s.Get(nil, []byte("kept"))
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
