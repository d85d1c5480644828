package loadgen

import (
	"context"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/kvpool/kvpool/internal/loadgen/bareserver"
	"github.com/kvpool/kvpool/internal/loadgen/loadgentest"
)

func TestScheduleAtDueByAndCountAgree(t *testing.T) {
	f := func(rate float64, d time.Duration, wantCount uint64) {
		t.Helper()
		s := newSchedule(rate)
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
	assert.Equal(t, uint64(0), newSchedule(10).DueBy(-1))
}

// The pacer sends every scheduled request exactly once and never before
// its time, and the run is exactly Rate × Duration long in requests.
func TestPacerFollowsTheSchedule(t *testing.T) {
	url := loadgentest.ServeHandler(t, bareserver.Handler)
	cfg := testConfig(url, 2000, 500*time.Millisecond)
	cfg.keepRecords = true
	res := run(t, cfg)

	require.Equal(t, uint64(1000), res.Planned)
	require.Equal(t, int64(1000), res.Sent)
	require.Len(t, res.records, 1000)
	assert.Equal(t, int64(1000), res.Codes[200])
	assert.Zero(t, res.ErrorCount)

	s := newSchedule(cfg.Rate)
	seqs := make([]int, 0, len(res.records))
	for _, rc := range res.records {
		assert.GreaterOrEqual(t, rc.sent, s.At(rc.seq), "request %d was sent before it was due", rc.seq)
		seqs = append(seqs, int(rc.seq))
	}
	sort.Ints(seqs)
	for i, seq := range seqs {
		require.Equal(t, i, seq, "every seq 0..999 exactly once")
	}
	// The send lag histogram holds one sample per request and the corrected
	// latency is never below the uncorrected one.
	assert.Equal(t, int64(1000), res.SendLag.TotalCount())
	assert.GreaterOrEqual(t, res.Corrected.ValueAtPercentile(50), res.Uncorrected.ValueAtPercentile(50))
}

func TestClosedLoopSendsExactlyTheRequestCount(t *testing.T) {
	url := loadgentest.ServeHandler(t, bareserver.Handler)
	cfg := testConfig(url, 0, 0)
	cfg.Requests = 777
	cfg.keepRecords = true
	res := run(t, cfg)
	assert.Equal(t, int64(777), res.Sent)
	assert.Equal(t, uint64(777), res.Resume, "all done: resume point is past the end")
	seen := map[uint64]bool{}
	for _, rc := range res.records {
		seen[rc.seq] = true
	}
	assert.Len(t, seen, 777)
}

func TestClosedLoopStopsAtDuration(t *testing.T) {
	url := loadgentest.ServeHandler(t, bareserver.Handler)
	res := run(t, testConfig(url, 0, 200*time.Millisecond))
	assert.Positive(t, res.Sent)
	assert.Zero(t, res.Planned, "a time-bounded closed loop plans no count")
	assert.Less(t, res.SendSpan, 200*time.Millisecond, "no send at or after -duration")
}

// When every connection is busy the engine opens more, up to the cap, and
// says so.
func TestEngineGrowsConnectionsWhenAllAreBusy(t *testing.T) {
	url := loadgentest.ServeHandler(t, func(ctx *fasthttp.RequestCtx) {
		time.Sleep(50 * time.Millisecond)
		bareserver.Handler(ctx)
	})
	cfg := testConfig(url, 200, 500*time.Millisecond)
	cfg.Conns, cfg.MaxConns = 1, 5
	cfg.GrowAfter = time.Millisecond
	res := run(t, cfg)
	assert.Equal(t, 5, res.ConnsPeak)
	assert.Equal(t, int64(100), res.Sent)
	assert.Contains(t, joinWarnings(res), "every connection was busy: opened 4 more than the 1 at start, reaching the cap -max-conns 5")
}

// A request that outlives -timeout fails as a timeout, its connection is
// replaced, and the run goes on. Only lower bounds on time: a stall of a
// loaded machine can time out more requests, never spare the hung one.
func TestTimeoutFailsTheRequestAndReplacesTheConnection(t *testing.T) {
	var n atomic.Int64
	release := make(chan struct{})
	url := loadgentest.ServeHandler(t, func(ctx *fasthttp.RequestCtx) {
		if n.Add(1) == 5 {
			<-release // hang until the test ends
		}
		bareserver.Handler(ctx)
	})
	t.Cleanup(func() { close(release) }) // runs before serve's shutdown
	cfg := testConfig(url, 0, 0)
	cfg.Conns, cfg.MaxConns = 1, 1
	cfg.Requests = 20
	cfg.Timeout = 200 * time.Millisecond
	res, err := Run(context.Background(), cfg, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(20), res.Sent)
	timeouts := res.Errors[errTimeout.Error()]
	assert.GreaterOrEqual(t, timeouts, int64(1), "the hung request timed out")
	assert.Equal(t, int64(20), res.Codes[200]+timeouts, "every other request was answered or timed out: %v", res.Errors)
	assert.Equal(t, timeouts, res.ErrorCount)
}

func TestRunRefusesToStartWithoutAServer(t *testing.T) {
	ln, err := bareserver.Listen("127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	_, err = Run(context.Background(), testConfig(url, 100, time.Second), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot connect to")
	assert.Contains(t, err.Error(), "is the server running")
}

func TestConfigRefusesNonLoopbackTargets(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Target = "http://192.0.2.1:19234"
	err := cfg.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a loopback address")
	cfg.AllowRemote = true
	assert.NoError(t, cfg.Validate(), "-allow-remote lifts the guard")

	f := func(target string) {
		t.Helper()
		c := DefaultConfig()
		c.Target = target
		assert.NoError(t, c.Validate(), target)
	}
	f("http://127.0.0.1:19234")
	f("http://localhost:19234/prefix/")
	f("http://[::1]:19234")
}

func joinWarnings(r *Result) string {
	var s string
	for _, w := range r.Warnings() {
		s += w + "\n"
	}
	return s
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
			shard := Shard{K: k, N: n}.share()
			for l := range loops {
				p := shard.split(l, loops)
				assert.Equal(t, uint64(k-1+l*n), p.first, "shard %d/%d loop %d: first", k, n, l)
				assert.Equal(t, uint64(n*loops), p.stride)
				var held uint64
				for j := uint64(0); p.seq(j) < total; j++ {
					seq := p.seq(j)
					require.Equal(t, -1, owner[seq], "request %d is in two shares", seq)
					owner[seq] = (k-1)*loops + l
					held++
				}
				assert.Equal(t, held, p.count(total), "shard %d/%d loop %d holds %d of %d", k, n, l, held, total)
				for m := range total + 1 {
					var want uint64
					for seq := p.first; seq < m; seq += p.stride {
						want++
					}
					require.Equal(t, want, p.count(m), "shard %d/%d loop %d: count(%d)", k, n, l, m)
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
	assert.Equal(t, wholeRun, Shard{}.share(), "no shard: the whole run")
	assert.Equal(t, wholeRun, Shard{K: 1, N: 1}.share())
}

// A share's timetable is the run's: its request k is due when the run's
// seq Seq(k) is, and DueBy and At agree on the share's own requests.
func TestScheduleOfAShareKeepsTheRunsTimes(t *testing.T) {
	whole := newSchedule(7919.5)
	for _, p := range []share{wholeRun, {1, 3}, {5, 12}} {
		s := whole.of(p)
		for k := range uint64(200) {
			seq := s.Seq(k)
			require.Equal(t, p.seq(k), seq)
			require.Equal(t, whole.At(seq), s.At(k), "share %v request %d", p, k)
			require.Equal(t, k+1, s.DueBy(s.At(k)), "share %v: request %d is due at its own time", p, k)
			require.Equal(t, k, s.DueBy(s.At(k)-1), "share %v: and not a nanosecond before", p)
		}
		assert.Equal(t, p.count(whole.Count(time.Second)), s.Count(time.Second))
	}
}
