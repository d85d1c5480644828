package schedule

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScheduleAtDueByAndCountAgree(t *testing.T) {
	f := func(rate float64, d time.Duration, wantCount uint64) {
		t.Helper()
		s := New(rate)
		assert.Equal(t, int64(0), s.At(0), "rate %v: the first request is due at the start", rate)
		assert.Equal(t, wantCount, s.Count(d), "rate %v over %v", rate, d)
		for seq := uint64(0); seq < wantCount+5; seq++ {
			at := s.At(seq)
			assert.Equal(t, seq+1, s.DueBy(at), "rate %v: request %d is due at its own time", rate, seq)
			assert.Equal(t, seq, s.DueBy(at-1), "rate %v: and not a nanosecond before", rate)
		}
	}
	f(100, time.Second, 100)
	f(3, time.Second, 3)                 // 1/3 s intervals do not divide evenly
	f(7919.5, 100*time.Millisecond, 792) // fractional rate
	f(1_000_000, time.Millisecond, 1000) // 1 µs apart
	assert.Equal(t, uint64(0), New(10).DueBy(-1))
}

// Split over N shards and each over L loops, the run's requests go each
// to exactly one share, and a share's count of 0..n-1 is what it holds.
func TestSharesPartitionTheRun(t *testing.T) {
	f := func(n, loops int, total uint64) {
		t.Helper()
		owner := make([]int, total)
		for i := range owner {
			owner[i] = -1
		}
		var counted uint64
		for k := 1; k <= n; k++ {
			shard := Shard{K: k, N: n}.Share()
			for l := range loops {
				p := shard.Split(l, loops)
				assert.Equal(t, uint64(k-1+l*n), p.First, "shard %d/%d loop %d: first", k, n, l)
				assert.Equal(t, uint64(n*loops), p.Stride)
				var held uint64
				for j := uint64(0); p.Seq(j) < total; j++ {
					seq := p.Seq(j)
					require.Equal(t, -1, owner[seq], "request %d is in two shares", seq)
					owner[seq] = (k-1)*loops + l
					held++
				}
				assert.Equal(t, held, p.Count(total), "shard %d/%d loop %d holds %d of %d", k, n, l, held, total)
				for m := range total + 1 {
					var want uint64
					for seq := p.First; seq < m; seq += p.Stride {
						want++
					}
					require.Equal(t, want, p.Count(m), "shard %d/%d loop %d: count(%d)", k, n, l, m)
				}
				counted += held
			}
		}
		assert.Equal(t, total, counted)
		for seq, o := range owner {
			require.NotEqual(t, -1, o, "request %d is in no share", seq)
		}
	}
	f(1, 1, 10)
	f(1, 3, 10)
	f(3, 1, 10)
	f(3, 2, 31)
	f(4, 3, 7) // fewer requests than shares: some hold none
	assert.Equal(t, WholeRun, Shard{}.Share(), "no shard: the whole run")
	assert.Equal(t, WholeRun, Shard{K: 1, N: 1}.Share())
}

// A share's timetable is the run's: its request k is due when the run's
// seq Seq(k) is, and DueBy and At agree on the share's own requests.
func TestScheduleOfAShareKeepsTheRunsTimes(t *testing.T) {
	whole := New(7919.5)
	for _, p := range []Share{WholeRun, {1, 3}, {5, 12}} {
		s := whole.Of(p)
		for k := range uint64(200) {
			seq := s.Seq(k)
			require.Equal(t, p.Seq(k), seq)
			require.Equal(t, whole.At(seq), s.At(k), "share %v request %d", p, k)
			require.Equal(t, k+1, s.DueBy(s.At(k)), "share %v: request %d is due at its own time", p, k)
			require.Equal(t, k, s.DueBy(s.At(k)-1), "share %v: and not a nanosecond before", p)
		}
		assert.Equal(t, p.Count(whole.Count(time.Second)), s.Count(time.Second))
	}
}

func TestParseShard(t *testing.T) {
	f := func(in string, want Shard, wantErr string) {
		t.Helper()
		got, err := ParseShard(in)
		if wantErr != "" {
			require.Error(t, err, in)
			assert.Contains(t, err.Error(), wantErr, in)
			assert.Contains(t, err.Error(), "want K/N with 1 ≤ K ≤ N, shards counted from 1", "%s: the error names the accepted form", in)
			return
		}
		require.NoError(t, err, in)
		assert.Equal(t, want, got)
		assert.Equal(t, in, got.String())
	}
	f("1/1", Shard{1, 1}, "")
	f("2/4", Shard{2, 4}, "")
	f("4/4", Shard{4, 4}, "")
	f("3/2", Shard{}, "K must be in 1..2")
	f("0/2", Shard{}, "K must be in 1..2")
	f("1/0", Shard{}, "N must be at least 1")
	f("2", Shard{}, `-shard "2"`)
	f("a/b", Shard{}, `-shard "a/b"`)
	f("1/2/3", Shard{}, `-shard "1/2/3"`)
	f("", Shard{}, `-shard ""`)
}

func TestParseStartAt(t *testing.T) {
	f := func(in string, want time.Time) {
		t.Helper()
		got, err := ParseStartAt(in)
		require.NoError(t, err, in)
		assert.True(t, want.Equal(got), "%s: %v, want %v", in, got, want)
	}
	noon := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	f("2026-11-24T12:00:00Z", noon)
	f("2026-11-24T12:00:00.25Z", noon.Add(250*time.Millisecond))
	f("2026-11-24T13:00:00.000000001+01:00", noon.Add(time.Nanosecond))
	f(strconv.FormatInt(noon.Unix(), 10), noon)
	f(strconv.FormatInt(noon.Unix(), 10)+".25", noon.Add(250*time.Millisecond))
	f(strconv.FormatInt(noon.Unix(), 10)+".000000001", noon.Add(time.Nanosecond))
	for _, bad := range []string{"", "noon", "1.2.3", "-5", "2026-11-24", "1795003200.1234567891"} {
		_, err := ParseStartAt(bad)
		assert.Error(t, err, bad)
	}
}
