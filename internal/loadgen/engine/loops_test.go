package engine

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/loadgen/bareserver"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/loadgentest"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/schedule"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
)

// Three loops split one schedule: each owns its share of the connections
// (5 = 2+2+1, the cap 7 = 3+2+2) and every third request, every request
// goes out once at the whole run's intended time and never before it,
// and what the loops recorded is one exact Result: the histograms, the
// interval series and results.bin each hold every request once.
func TestLoopsSplitTheScheduleAndMergeExactly(t *testing.T) {
	bothSenders(t, func(t *testing.T, mode func(config.Config) config.Config) {
		url := loadgentest.ServeHandler(t, bareserver.Handler)
		cfg := testConfig(url, 6000, 300*time.Millisecond)
		cfg.Conns, cfg.MaxConns, cfg.Loops = 5, 7, 3
		cfg.KeepRecords = true
		cfg.Out, cfg.Interval = t.TempDir(), 100*time.Millisecond
		g, res := runGroup(t, context.Background(), mode(cfg))

		require.Len(t, g.engines, 3)
		for l, want := range []struct{ conns, max int }{{2, 3}, {2, 2}, {1, 2}} {
			assert.Equal(t, want.conns, g.engines[l].conns0, "loop %d: connections", l)
			assert.Equal(t, want.max, g.engines[l].maxConns, "loop %d: cap", l)
		}
		require.Equal(t, uint64(1800), res.Planned)
		require.Equal(t, int64(1800), res.Sent)
		assert.Zero(t, res.ErrorCount)
		assert.Equal(t, 3, res.Loops)

		var carried int64
		for l, e := range g.engines {
			assert.Equal(t, uint64(600), e.planned, "loop %d plans every third request", l)
			assert.Equal(t, e.planned, e.next.Load(), "loop %d sent its share", l)
			var n int64
			for _, c := range e.conns {
				n += c.carried
			}
			assert.Equal(t, int64(e.planned), n, "loop %d's connections carried its share", l)
			carried += n
		}
		assert.Equal(t, res.Sent, carried, "Sent is the sum over the loops")

		whole := schedule.New(cfg.Rate)
		seen := make([]bool, res.Planned)
		for _, rc := range res.Records {
			require.False(t, seen[rc.Seq], "request %d recorded twice", rc.Seq)
			seen[rc.Seq] = true
			require.Equal(t, whole.At(rc.Seq), rc.Intended, "request %d: intended time", rc.Seq)
			require.GreaterOrEqual(t, rc.Sent, rc.Intended, "request %d was sent before it was due", rc.Seq)
		}
		assert.Len(t, res.Records, int(res.Sent))
		for _, h := range []struct {
			name  string
			total int64
		}{{"corrected", res.Corrected.TotalCount()}, {"uncorrected", res.Uncorrected.TotalCount()}, {"send lag", res.SendLag.TotalCount()}} {
			assert.Equal(t, res.Sent, h.total, "the %s histogram holds every request once", h.name)
		}
		var series int64
		for _, p := range res.Intervals {
			series += p.Responses
		}
		assert.Equal(t, res.Sent, series, "the interval series holds every response once")
		bin := readResults(t, filepath.Join(cfg.Out, record.ResultsFile))
		require.Len(t, bin, int(res.Sent))
		binSeqs := map[uint64]bool{}
		for _, r := range bin {
			binSeqs[r.Seq] = true
		}
		assert.Len(t, binSeqs, int(res.Sent), "results.bin holds every request once")
		assert.Equal(t, res.Planned, res.Resume)
		assert.GreaterOrEqual(t, res.ConnsPeak, 5)
		assert.LessOrEqual(t, res.InFlightPeak, res.ConnsPeak, "the sum of the loops' peaks: at most a request per connection")
	})
}

// The closed loop's request count is split by seq over the loops, each
// with a counter of its own: every request once, the resume point past
// the end.
func TestClosedLoopSplitsTheRequestCountOverLoops(t *testing.T) {
	url := loadgentest.ServeHandler(t, bareserver.Handler)
	cfg := testConfig(url, 0, 0)
	cfg.Requests, cfg.Loops, cfg.Conns = 778, 3, 4
	cfg.KeepRecords = true
	g, res := runGroup(t, context.Background(), cfg)
	for l, want := range []uint64{260, 259, 259} {
		assert.Equal(t, want, g.engines[l].planned, "loop %d", l)
	}
	assert.Equal(t, uint64(778), res.Planned)
	assert.Equal(t, int64(778), res.Sent)
	assert.Equal(t, uint64(778), res.Resume, "all done: the resume point is past the end")
	assert.Equal(t, 4, res.InFlightPeak, "closed loop: a request on every connection")
	seen := map[uint64]bool{}
	for _, rc := range res.Records {
		require.Less(t, rc.Seq, uint64(778))
		seen[rc.Seq] = true
	}
	assert.Len(t, seen, 778)
}

// A fill over several loops resumes at the lowest id not stored, whichever
// loop gave up on it while the others went on past it.
func TestResumeIsTheLowestUndoneOverLoops(t *testing.T) {
	url := loadgentest.ServeHandler(t, func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == api.PathEntity && string(ctx.QueryArgs().Peek("id")) == "50" {
			ctx.SetStatusCode(fasthttp.StatusInternalServerError)
			return
		}
		bareserver.Handler(ctx)
	})
	cfg := testConfig(url, 0, 0)
	cfg.Requests, cfg.Loops, cfg.Conns, cfg.MaxConns, cfg.Retries = 300, 3, 3, 3, 1
	cfg.Workload = workload.Workload{Sequential: true, First: 1, Keys: 300, ValueSize: 16}
	cfg.KeepRecords = true
	g, res := runGroup(t, context.Background(), cfg)
	assert.Equal(t, uint64(49), res.Resume, "id 50 is seq 49")
	var past bool
	for l, e := range g.engines {
		if l != 49%3 && e.next.Load() > 49 {
			past = true
		}
	}
	assert.True(t, past, "the other loops went on past the failed request")
	done := map[uint64]bool{}
	for _, rc := range res.Records {
		if rc.Code == 201 || rc.Code == 200 || rc.Code == 204 {
			done[rc.Seq] = true
		}
	}
	for seq := range res.Resume {
		require.True(t, done[seq], "request %d is below the resume point and was not stored", seq)
	}
}

// Three shards of one schedule, run at once from one agreed instant, send
// it whole: every request once, by the shard it belongs to, at the whole
// schedule's time and never before; each plans and asks a third.
func TestShardsSendOneScheduleTogether(t *testing.T) {
	url := loadgentest.ServeHandler(t, bareserver.Handler)
	// A second ahead: each shard must still be starting up, not over a
	// second late (which Validate refuses), however slow the machine.
	at := time.Now().Add(time.Second)
	const n = 3
	results := make([]*record.Result, n)
	var wg sync.WaitGroup
	for k := 1; k <= n; k++ {
		wg.Go(func() {
			cfg := testConfig(url, 3000, 300*time.Millisecond)
			cfg.Shard, cfg.StartAt, cfg.Loops, cfg.KeepRecords = schedule.Shard{K: k, N: n}, at, 2, true
			results[k-1] = run(t, cfg)
		})
	}
	wg.Wait()
	whole := schedule.New(3000)
	sender := map[uint64]int{}
	for i, res := range results {
		k := i + 1
		assert.Equal(t, uint64(300), res.Planned, "shard %d plans a third", k)
		assert.Equal(t, 1000.0, res.Config.AskedRate(), "shard %d asks a third", k)
		assert.True(t, res.Start.Equal(at), "shard %d started at the agreed instant: %v, not %v", k, res.Start, at)
		assert.Equal(t, int64(res.Planned), res.Sent)
		for _, rc := range res.Records {
			require.Equal(t, uint64(k-1), rc.Seq%n, "request %d is not shard %d's", rc.Seq, k)
			prev, dup := sender[rc.Seq]
			require.False(t, dup, "request %d sent by shard %d and %d", rc.Seq, prev, k)
			sender[rc.Seq] = k
			require.Equal(t, whole.At(rc.Seq), rc.Intended, "request %d: intended time", rc.Seq)
			require.GreaterOrEqual(t, rc.Sent, rc.Intended, "request %d was sent before it was due", rc.Seq)
		}
	}
	assert.Len(t, sender, 900, "the whole schedule: 3000 req/s for 300 ms")
}

// A run with a start instant waits for it: its start is that instant and
// nothing goes out before it.
func TestStartAtStartsTheScheduleAtTheInstant(t *testing.T) {
	var first atomic.Int64
	url := loadgentest.ServeHandler(t, func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == api.PathEntity {
			first.CompareAndSwap(0, time.Now().UnixNano())
		}
		bareserver.Handler(ctx)
	})
	at := time.Now().Add(200 * time.Millisecond)
	cfg := testConfig(url, 1000, 100*time.Millisecond)
	cfg.StartAt = at
	res := run(t, cfg)
	assert.True(t, res.Start.Equal(at), "start %v, asked %v", res.Start, at)
	assert.Equal(t, int64(100), res.Sent)
	assert.GreaterOrEqual(t, first.Load(), at.UnixNano(), "no request reached the server before the instant")
}

// Interrupted while it waits for its start instant, a run sends nothing
// and says so.
func TestInterruptedBeforeStartAtSendsNothing(t *testing.T) {
	var hits atomic.Int64
	url := loadgentest.ServeHandler(t, func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == api.PathEntity {
			hits.Add(1)
		}
		bareserver.Handler(ctx)
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, rate := range []float64{1000, 0} {
		cfg := testConfig(url, rate, time.Second)
		cfg.StartAt = time.Now().Add(time.Hour)
		cfg.Shard = schedule.Shard{K: 1, N: 2}
		_, err := Run(ctx, cfg, nil)
		require.Error(t, err, "rate %v", rate)
		assert.Contains(t, err.Error(), "interrupted while waiting for -start-at")
	}
	assert.Zero(t, hits.Load(), "nothing was sent")
}

// evenShare gives the first loops one more.
func TestEvenShare(t *testing.T) {
	f := func(total, n int, want ...int) {
		t.Helper()
		var got []int
		for l := range n {
			got = append(got, evenShare(total, l, n))
		}
		assert.Equal(t, want, got, "%d over %d", total, n)
	}
	f(5, 3, 2, 2, 1)
	f(6, 3, 2, 2, 2)
	f(64, 1, 64)
	f(7, 4, 2, 2, 2, 1)
	f(3, 3, 1, 1, 1)
}
