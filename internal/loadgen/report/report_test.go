package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/latency"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/schedule"
)

func TestLoaderText(t *testing.T) {
	f := func(want string, r record.Result) {
		t.Helper()
		assert.Equal(t, want, LoaderText(&r))
	}
	f("loader: 2 loops on CPUs 0-1 (pinned)", record.Result{Loops: 2, LoaderCPUs: 2, LoaderCPUSet: cpuset.Of(0, 1), Pinned: true})
	f("loader: 1 loop on CPUs 3 (pinned)", record.Result{Loops: 1, LoaderCPUs: 1, LoaderCPUSet: cpuset.Of(3), Pinned: true})
	f("loader: 4 loops, unpinned (no -cpus; CPUs 0-15 allowed)", record.Result{Loops: 4, LoaderCPUs: 16, LoaderCPUSet: cpuset.MustParse("0-15"), Unpinned: "no -cpus"})
	f("loader: 2 loops, unpinned: operation not permitted", record.Result{Loops: 2, LoaderCPUs: 16, Unpinned: "operation not permitted"})
	f("loader: 8 loops on 16 CPUs (pinned)", record.Result{Loops: 8, LoaderCPUs: 16, Pinned: true})
	f("", record.Result{})
}

func TestShardText(t *testing.T) {
	at := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	f := func(want string, c config.Config) {
		t.Helper()
		assert.Equal(t, want, ShardText(&c))
	}
	f("shard 2/4 of a 40000 req/s schedule starting 2026-11-24T12:00:00Z", config.Config{Rate: 40000, Shard: schedule.Shard{K: 2, N: 4}, StartAt: at})
	f("a 40000 req/s schedule starting 2026-11-24T12:00:00.25Z", config.Config{Rate: 40000, StartAt: at.Add(250 * time.Millisecond)})
	f("", config.Config{Rate: 40000})
}

// A shard's summary records the whole schedule and its share of it; the
// report says which shard it was and where the loader ran.
func TestShardSummaryAndReport(t *testing.T) {
	at := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	r := &record.Result{Config: config.Default(), Planned: 10_000, Sent: 10_000, Elapsed: time.Second,
		Uncorrected: latency.New(), Corrected: latency.New(), SendLag: latency.New(),
		Loops: 2, LoopsWhy: "2 loops: -loops 2", LoaderCPUs: 2, LoaderCPUSet: cpuset.Of(0, 1), Pinned: true,
		Quantum: 250 * time.Microsecond}
	r.Config.Rate, r.Config.Shard, r.Config.StartAt = 40_000, schedule.Shard{K: 2, N: 4}, at
	s := Summarize(r, nil)
	assert.Equal(t, 10_000.0, s.AskedRate, "this shard's share")
	assert.Equal(t, 40_000.0, s.WholeRate)
	require.NotNil(t, s.Shard)
	assert.Equal(t, schedule.Shard{K: 2, N: 4}, *s.Shard)
	require.NotNil(t, s.StartAt)
	assert.True(t, s.StartAt.Equal(at))
	assert.Equal(t, 2, s.Loops)
	assert.Equal(t, "2 loops: -loops 2", s.LoopsWhy)
	assert.Equal(t, 250.0, s.QuantumUs)
	assert.Equal(t, 2, s.LoaderCPUs)
	assert.Equal(t, "0-1", s.LoaderCPUList)
	assert.True(t, s.Pinned)

	var out bytes.Buffer
	Print(&out, r)
	assert.Contains(t, out.String(), "asked 10000: 100.00%")
	assert.Contains(t, out.String(), "loader: 2 loops on CPUs 0-1 (pinned)")
	assert.Contains(t, out.String(), "Loops:        2 loops: -loops 2\n")
	assert.Regexp(t, `Send lag .* late \(quantum 250[.0]*us, sized to the rate and the answers\)\n`, out.String())
	assert.Contains(t, out.String(), "shard 2/4 of a 40000 req/s schedule starting 2026-11-24T12:00:00Z")
	assert.Empty(t, r.Warnings(), "10,000 req/s asked of this shard, and sent")
}

func TestDefaultDirIsNeverAnEarlierRuns(t *testing.T) {
	t.Chdir(t.TempDir())
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	first := DefaultDir(now, map[string]string{"pool": "fifo"}, "get=0.8,put=0.2", "5000")
	assert.Equal(t, filepath.Join("results", "20260102T030405Z-fifo-get0.8_put0.2-5000"), first)
	require.NoError(t, os.MkdirAll(first, 0o755))
	assert.Equal(t, first+"-2", DefaultDir(now, map[string]string{"pool": "fifo"}, "get=0.8,put=0.2", "5000"))
	assert.Equal(t, filepath.Join("results", "20260102T030405Z-server-put-closed"), DefaultDir(now, nil, "put", RateName(0)))
}
