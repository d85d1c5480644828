package record

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sortSpool sorts a spool longer than it holds in memory in runs and
// merges them: every record once, in Seq order, and the runs removed.
func TestSortSpoolInRuns(t *testing.T) {
	defer func(n int) { sortRunRecords = n }(sortRunRecords)
	sortRunRecords = 7
	dir := t.TempDir()
	path := filepath.Join(dir, SpoolFile)
	w, err := createSpool(path)
	require.NoError(t, err)
	const n = 100
	for i := range n {
		seq := uint64(i*37) % n // every seq once, far from in order
		require.NoError(t, w.write(&Record{Seq: seq, Key: seq + 1, Sent: int64(seq) * 10}))
	}
	require.NoError(t, w.close())
	next, cleanup, err := sortSpool(path)
	require.NoError(t, err)
	for want := range uint64(n) {
		rc, ok, err := next()
		require.NoError(t, err)
		require.True(t, ok, "record %d", want)
		assert.Equal(t, want, rc.Seq)
		assert.Equal(t, want+1, rc.Key)
	}
	_, ok, err := next()
	require.NoError(t, err)
	assert.False(t, ok)
	cleanup()
	left, err := filepath.Glob(path + ".*")
	require.NoError(t, err)
	assert.Empty(t, left, "the sorted runs are removed")
}
