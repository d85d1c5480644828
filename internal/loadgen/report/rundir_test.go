package report

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultDirIsNeverAnEarlierRuns(t *testing.T) {
	t.Chdir(t.TempDir())
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	first := DefaultDir(now, map[string]string{"pool": "fifo"}, "get=0.8,put=0.2", "5000")
	assert.Equal(t, filepath.Join("results", "20260102T030405Z-fifo-get0.8_put0.2-5000"), first)
	require.NoError(t, os.MkdirAll(first, 0o755))
	assert.Equal(t, first+"-2", DefaultDir(now, map[string]string{"pool": "fifo"}, "get=0.8,put=0.2", "5000"))
	assert.Equal(t, filepath.Join("results", "20260102T030405Z-server-put-closed"), DefaultDir(now, nil, "put", RateName(0)))
}
