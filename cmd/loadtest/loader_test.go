package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/loadgen/report"
	"github.com/kvpool/kvpool/internal/loadgen/schedule"
)

// Bad loader settings are refused at once (exit 2), naming the flag and
// the accepted form.
func TestLoaderUsageErrorsExitTwo(t *testing.T) {
	f := func(want string, args ...string) {
		t.Helper()
		code, _, errs := invoke(t, args...)
		assert.Equal(t, 2, code, "%q: %s", args, errs)
		assert.Contains(t, errs, want, "%q", args)
	}
	ahead := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	f("-cpus 1023: CPU 1023 is not on this machine (it has", "attack", "-cpus", "1023")
	f(`invalid value "" for flag -cpus: cpu list "": no CPUs named; write a list such as 0-7`, "attack", "-cpus", "")
	f(`invalid value "0-x" for flag -cpus`, "attack", "-cpus", "0-x")
	f("-cpus 1023: CPU 1023 is not on this machine", "fill", "-cpus", "1023")
	f("-cpus 1023: CPU 1023 is not on this machine", "saturate", "-cpus", "1023")
	f("-loops 65 is above -conns 64", "attack", "-loops", "65")
	f("-loops 5 is above -conns 4", "fill", "-loops", "5", "-conns", "4")
	f("-loops 3 is above -conns 2", "saturate", "-loops", "3", "-conns", "2")
	f("-loops -1 is negative", "attack", "-loops", "-1")
	f("-loops 2 needs -engine fast", "attack", "-loops", "2", "-engine", "vegeta")
	f("-shard 3/2: K must be in 1..2; want K/N with 1 ≤ K ≤ N, shards counted from 1", "attack", "-shard", "3/2", "-start-at", ahead)
	f("-shard 0/2: K must be in 1..2", "attack", "-shard", "0/2", "-start-at", ahead)
	f(`-shard "two": want K/N with 1 ≤ K ≤ N`, "attack", "-shard", "two", "-start-at", ahead)
	f(`-shard "1-2": want K/N`, "attack", "-shard", "1-2")
	f("-shard 2/4 needs -start-at: the 4 shards of one schedule must agree on the instant it starts", "attack", "-shard", "2/4")
	f("-start-at 2020-01-01T00:00:00Z is ", "attack", "-start-at", "2020-01-01T00:00:00Z")
	f("in the past; give an instant ahead (RFC 3339 such as", "attack", "-start-at", "1600000000")
	f("-start-at on a closed loop (-rate 0) needs -shard K/N", "attack", "-rate", "0", "-start-at", ahead)
	f(`invalid value "noon" for flag -start-at: "noon": want an instant in RFC 3339 (2026-11-24T12:00:00Z`, "attack", "-start-at", "noon")
	f("or Unix seconds (1795003200, 1795003200.25)", "attack", "-start-at", "2026-11-24 12:00")
}

// attack says where its loader ran, in the report and in summary.json.
func TestAttackReportsItsLoader(t *testing.T) {
	url := bare(t)
	dir := filepath.Join(t.TempDir(), "run")
	code, out, errs := invoke(t, "attack", "-target", url, "-rate", "500", "-duration", "100ms", "-conns", "4", "-loops", "2", "-q", "-out", dir)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "loader: 2 loops, unpinned (no -cpus")
	s := readSummary(t, dir)
	assert.Equal(t, 2, s.Loops)
	assert.False(t, s.Pinned)
	assert.Equal(t, "no -cpus", s.Unpinned)
	assert.Positive(t, s.LoaderCPUs)

	allowed, err := cpuset.Affinity()
	require.NoError(t, err)
	one := strconv.Itoa(allowed.CPUs()[0])
	dir = filepath.Join(t.TempDir(), "run")
	code, out, errs = invoke(t, "attack", "-target", url, "-rate", "500", "-duration", "100ms", "-conns", "2", "-cpus", one, "-q", "-out", dir)
	require.Equal(t, 0, code, errs)
	s = readSummary(t, dir)
	if s.Pinned { // where the loader may pin itself
		assert.Contains(t, out, "loader: 1 loop on CPUs "+one+" (pinned)")
		assert.Equal(t, 1, s.LoaderCPUs)
		assert.Equal(t, one, s.LoaderCPUList)
	} else {
		assert.Contains(t, out, "loader: 1 loop, unpinned: ")
	}
	assert.Equal(t, 1, s.Loops, "-loops 0: never more than the CPUs of -cpus")

	// -loops 0 at a rate one loop sends: one loop, and the report says why.
	dir = filepath.Join(t.TempDir(), "run")
	code, out, errs = invoke(t, "attack", "-target", url, "-rate", "500", "-duration", "100ms", "-conns", "4", "-q", "-out", dir)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "Loops:        1 loop: 500 req/s is within one loop's ~")
	s = readSummary(t, dir)
	assert.Equal(t, 1, s.Loops)
	assert.Contains(t, s.LoopsWhy, "1 loop: 500 req/s is within one loop's ~")
}

// Three loaders each sending a shard of one schedule from one instant,
// merged, are one loader's run: the same planned count, asked rate and
// requests. merge checks that shards agree and names the missing ones.
func TestShardsMergeIntoOneSchedule(t *testing.T) {
	url := bare(t)
	base := t.TempDir()
	at := time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano)
	dirs := make([]string, 3)
	codes := make([]int, 3)
	outs := make([]string, 3)
	errs := make([]string, 3)
	var wg sync.WaitGroup
	for i := range dirs {
		dirs[i] = filepath.Join(base, fmt.Sprintf("shard%d", i+1))
		wg.Go(func() {
			codes[i], outs[i], errs[i] = invoke(t, "attack", "-target", url, "-rate", "3000", "-duration", "300ms", "-conns", "4",
				"-shard", fmt.Sprintf("%d/3", i+1), "-start-at", at, "-q", "-out", dirs[i])
		})
	}
	wg.Wait()
	for i := range dirs {
		require.Equal(t, 0, codes[i], errs[i])
		assert.Contains(t, outs[i], fmt.Sprintf("shard %d/3 of a 3000 req/s schedule starting %s", i+1, at))
		assert.Contains(t, outs[i], "asked 1000:")
		s := readSummary(t, dirs[i])
		assert.Equal(t, 1000.0, s.AskedRate, "shard %d asks its share", i+1)
		assert.Equal(t, 3000.0, s.WholeRate)
		assert.Equal(t, uint64(300), s.Planned)
		require.NotNil(t, s.Shard)
		assert.Equal(t, schedule.Shard{K: i + 1, N: 3}, *s.Shard)
	}
	one := filepath.Join(base, "one")
	code, _, e := invoke(t, "attack", "-target", url, "-rate", "3000", "-duration", "300ms", "-conns", "4", "-q", "-out", one)
	require.Equal(t, 0, code, e)
	single := readSummary(t, one)

	merged := filepath.Join(base, "merged")
	code, out, e := invoke(t, "merge", dirs[0], dirs[1], dirs[2], "-out", merged)
	require.Equal(t, 0, code, e)
	assert.Contains(t, out, "Merged shards 1, 2, 3 of 3 of a 3000 req/s schedule starting "+at+": the whole schedule")
	m := readSummary(t, merged)
	assert.Equal(t, single.Planned, m.Planned)
	assert.Equal(t, single.AskedRate, m.AskedRate)
	assert.Equal(t, single.Sent, m.Sent)
	assert.Equal(t, single.StatusCodes, m.StatusCodes)
	assert.Nil(t, m.Shard, "the merge is the whole schedule")

	code, out, e = invoke(t, "merge", dirs[0], dirs[2], "-out", filepath.Join(base, "partial"))
	require.Equal(t, 0, code, e)
	assert.Contains(t, out, "shards 2 missing")
	assert.Contains(t, out, "WARNING: shards 2 of 3 are missing")

	// A shard of another start instant, or one given twice, is refused.
	other := copyRun(t, dirs[1], filepath.Join(base, "other"), func(s map[string]any) { s["start_at"] = "2030-01-01T00:00:00Z" })
	code, _, e = invoke(t, "merge", dirs[0], other, "-out", filepath.Join(base, "m2"))
	assert.Equal(t, 1, code)
	assert.Contains(t, e, "shards of one schedule agree on -shard's N, -rate and -start-at")
	twice := copyRun(t, dirs[0], filepath.Join(base, "twice"), func(map[string]any) {})
	code, _, e = invoke(t, "merge", dirs[0], twice, "-out", filepath.Join(base, "m3"))
	assert.Equal(t, 1, code)
	assert.Contains(t, e, "are both shard 1/3")
	noShard := copyRun(t, dirs[1], filepath.Join(base, "noshard"), func(s map[string]any) { delete(s, "shard") })
	code, _, e = invoke(t, "merge", dirs[0], noShard, "-out", filepath.Join(base, "m4"))
	assert.Equal(t, 1, code)
	assert.Contains(t, e, "is no shard")
}

// copyRun copies a run's folder to dir with its summary.json changed by
// edit.
func copyRun(t *testing.T, from, dir string, edit func(map[string]any)) string {
	t.Helper()
	require.NoError(t, os.CopyFS(dir, os.DirFS(from)))
	path := filepath.Join(dir, report.SummaryFile)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var s map[string]any
	require.NoError(t, json.Unmarshal(b, &s))
	edit(s)
	b, err = json.Marshal(s)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
	return dir
}
