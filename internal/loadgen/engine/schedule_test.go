package engine

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
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/schedule"
)

// The pacer sends every scheduled request exactly once and never before
// its time, and the run is exactly Rate × Duration long in requests.
func TestPacerFollowsTheSchedule(t *testing.T) {
	url := loadgentest.ServeHandler(t, bareserver.Handler)
	cfg := testConfig(url, 2000, 500*time.Millisecond)
	cfg.KeepRecords = true
	res := run(t, cfg)

	require.Equal(t, uint64(1000), res.Planned)
	require.Equal(t, int64(1000), res.Sent)
	require.Len(t, res.Records, 1000)
	assert.Equal(t, int64(1000), res.Codes[200])
	assert.Zero(t, res.ErrorCount)

	s := schedule.New(cfg.Rate)
	seqs := make([]int, 0, len(res.Records))
	for _, rc := range res.Records {
		assert.GreaterOrEqual(t, rc.Sent, s.At(rc.Seq), "request %d was sent before it was due", rc.Seq)
		seqs = append(seqs, int(rc.Seq))
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
	cfg.KeepRecords = true
	res := run(t, cfg)
	assert.Equal(t, int64(777), res.Sent)
	assert.Equal(t, uint64(777), res.Resume, "all done: resume point is past the end")
	seen := map[uint64]bool{}
	for _, rc := range res.Records {
		seen[rc.Seq] = true
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
	timeouts := res.Errors[record.ErrTimeout.Error()]
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

func joinWarnings(r *record.Result) string {
	var s string
	for _, w := range r.Warnings() {
		s += w + "\n"
	}
	return s
}
