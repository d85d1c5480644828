package metrics

import (
	"fmt"
	"math"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/pool"
	"github.com/kvpool/kvpool/internal/store"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHTTPCountsKnownAndUnknownCodes(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := NewHTTP(reg)
	h.Observe(api.Get, 200, time.Millisecond)
	h.Observe(api.Get, 200, time.Millisecond)
	h.Observe(api.Put, 418, time.Millisecond) // not pre-resolved: still counted
	h.Observe(api.Method(200), 200, 0)        // out of range: counted as other
	h.Add(api.Unknown, 408, 2)                // answered outside the handler: counted, not timed
	h.Add(api.Unknown, 599, 1)

	assert.Equal(t, 2.0, testutil.ToFloat64(h.requests.WithLabelValues("GET", "200")))
	assert.Equal(t, 1.0, testutil.ToFloat64(h.requests.WithLabelValues("PUT", "418")))
	assert.Equal(t, 1.0, testutil.ToFloat64(h.requests.WithLabelValues("other", "200")))
	assert.Equal(t, 2.0, testutil.ToFloat64(h.requests.WithLabelValues("unknown", "408")))
	assert.Equal(t, 1.0, testutil.ToFloat64(h.requests.WithLabelValues("unknown", "599")))
	n, err := testutil.GatherAndCount(reg, "kvserver_http_request_duration_seconds")
	require.NoError(t, err)
	assert.Equal(t, api.NumMethods, n)
	assert.Equal(t, 0.0, histogramCount(t, reg, "unknown"), "Add records no duration")
	assert.Equal(t, 2.0, histogramCount(t, reg, "GET"))
}

// histogramCount is the number of durations observed for method.
func histogramCount(t *testing.T, reg *prometheus.Registry, method string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "kvserver_http_request_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "method" && l.GetValue() == method {
					return float64(m.GetHistogram().GetSampleCount())
				}
			}
		}
	}
	t.Fatalf("no duration series for method %q", method)
	return 0
}

func TestConnErrorsStartAtZero(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := NewConnErrors(reg)
	c.Inc(ConnOther)
	c.Inc(ConnOther)
	c.Inc(ConnReset)
	for _, k := range ConnErrorKinds {
		want := map[string]float64{ConnOther: 2, ConnReset: 1}[k]
		assert.Equal(t, want, testutil.ToFloat64(c.total.WithLabelValues(k)), k)
	}
}

func TestConfigInfo(t *testing.T) {
	reg := prometheus.NewRegistry()
	labels := prometheus.Labels{}
	for _, name := range ConfigLabels {
		labels[name] = name + "-value"
	}
	labels["extra"] = "x"
	NewConfigInfo(reg, labels)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP kvserver_config_info The server's effective configuration, in its labels; the value is always 1.
# TYPE kvserver_config_info gauge
kvserver_config_info{cache_mb="cache_mb-value",cap="cap-value",drop_closed_after="drop_closed_after-value",extra="x",io_concurrency="io_concurrency-value",io_delay="io_delay-value",io_delay_dist="io_delay_dist-value",overflow="overflow-value",pool="pool-value",queue_timeout="queue_timeout-value",sync="sync-value",version="version-value",workers="workers-value"} 1
`)))

	delete(labels, "workers")
	assert.PanicsWithValue(t, "metrics: kvserver_config_info without label workers", func() {
		NewConfigInfo(prometheus.NewRegistry(), labels)
	})
}

// TestDeadlinesCounted: each outcome of a request with a deadline lands in
// its own counter, and a request that met its deadline in none.
func TestDeadlinesCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	d := NewDeadlines(reg)
	for range 4 {
		d.Request()
	}
	d.Outcome(true, false, false)  // dropped in the pool
	d.Outcome(true, true, false)   // gave up waiting for the store
	d.Outcome(false, false, true)  // ran past it
	d.Outcome(false, false, false) // in time
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP kvserver_deadline_requests_total Requests that carried a deadline (X-Request-Timeout-Ms).
# TYPE kvserver_deadline_requests_total counter
kvserver_deadline_requests_total 4
# HELP kvserver_deadline_wasted_total Requests whose store operation ran and finished after their deadline: work done for a client that had stopped waiting.
# TYPE kvserver_deadline_wasted_total counter
kvserver_deadline_wasted_total 1
`), "kvserver_deadline_requests_total", "kvserver_deadline_wasted_total"))
	assert.Equal(t, 1.0, testutil.ToFloat64(d.dropped[0]), "pool")
	assert.Equal(t, 1.0, testutil.ToFloat64(d.dropped[1]), "store")
}

// TestIOCollectorReadsStatsAtScrape: the store stand-in's state is read at
// each scrape, and waits go to the histogram.
func TestIOCollectorReadsStatsAtScrape(t *testing.T) {
	reg := prometheus.NewRegistry()
	var s store.BoundedStats
	io := NewIO(reg, func() store.BoundedStats { return s })
	s.InProgress, s.Waiting, s.Capacity, s.GaveUp = 16, 40, 16, 3
	io.ObserveWait(0)
	io.ObserveWait(2 * time.Millisecond)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP kvserver_io_in_progress Store operations holding one of -io-concurrency slots now.
# TYPE kvserver_io_in_progress gauge
kvserver_io_in_progress 16
# HELP kvserver_io_waiting Store operations waiting for a slot now, in arrival order.
# TYPE kvserver_io_waiting gauge
kvserver_io_waiting 40
# HELP kvserver_io_deadline_total Store operations that gave up waiting for a slot because their request's deadline passed (answered 503 deadline, the store untouched).
# TYPE kvserver_io_deadline_total counter
kvserver_io_deadline_total 3
`), "kvserver_io_in_progress", "kvserver_io_waiting", "kvserver_io_deadline_total"))
	s.Waiting = 0
	var m dto.Metric
	require.NoError(t, io.wait.Write(&m))
	assert.EqualValues(t, 2, m.GetHistogram().GetSampleCount())
	assert.InDelta(t, 0.002, m.GetHistogram().GetSampleSum(), 1e-9)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP kvserver_io_waiting Store operations waiting for a slot now, in arrival order.
# TYPE kvserver_io_waiting gauge
kvserver_io_waiting 0
`), "kvserver_io_waiting"))
}

// TestRowCacheCollectorReadsStatsAtScrape: the row cache's counters are
// read at each scrape, under the names the docs give.
func TestRowCacheCollectorReadsStatsAtScrape(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := store.RowCacheStats{Hits: 90, Misses: 10, Evictions: 3, Dropped: 2, Entries: 7, Bytes: 4500, Capacity: 1 << 20}
	NewRowCache(reg, func() store.RowCacheStats { return s })
	want := func(hits int) string {
		return fmt.Sprintf(`
# HELP kvserver_row_cache_hits_total GETs answered from the row cache.
# TYPE kvserver_row_cache_hits_total counter
kvserver_row_cache_hits_total %d
# HELP kvserver_row_cache_evictions_total Entries dropped, least recently used first, to keep the row cache within -row-cache-mb (not those a write removed).
# TYPE kvserver_row_cache_evictions_total counter
kvserver_row_cache_evictions_total 3
# HELP kvserver_row_cache_bytes Bytes charged for the row cache's entries: keys, values and an estimate of each entry's overhead.
# TYPE kvserver_row_cache_bytes gauge
kvserver_row_cache_bytes 4500
`, hits)
	}
	names := []string{"kvserver_row_cache_hits_total", "kvserver_row_cache_evictions_total", "kvserver_row_cache_bytes"}
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want(90)), names...))
	s.Hits = 91
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want(91)), names...))
	n, err := testutil.GatherAndCount(reg)
	require.NoError(t, err)
	assert.Equal(t, 7, n, "hits, misses, evictions, dropped fills, entries, bytes, capacity")
}

func TestVersionOf(t *testing.T) {
	f := func(bi debug.BuildInfo, want string) {
		t.Helper()
		assert.Equal(t, want, versionOf(&bi))
	}
	f(debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3")
	f(debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef0123"},
	}}, "0123456789ab")
	f(debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel")
	assert.NotEmpty(t, Version())
}

// TestAdmissionCollector: each class's counts under its class label, the
// pace as 0/1 and a rate (0 while not paced), and the signal.
func TestAdmissionCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	var reads, writes pool.Stats
	pace := pool.PaceStats{Rate: math.Inf(1)}
	var io IOState
	NewAdmission(reg, func() (pool.Stats, pool.Stats) { return reads, writes }, func() pool.PaceStats { return pace }, func() IOState { return io })
	reads.Completed, reads.Queued, reads.Workers = 9, 1, 4
	writes.Completed, writes.Workers = 3, 2
	writes.Rejected[pool.ReasonIO] = 5
	io = IOState{Overload: 0.75, L0Paced: 1500 * time.Millisecond}
	gather := func(want string, names ...string) {
		t.Helper()
		require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), names...))
	}
	gather(`
# HELP kvserver_admission_completed_total Requests each class admitted and ran (class: read = GET; write = PUT, DELETE).
# TYPE kvserver_admission_completed_total counter
kvserver_admission_completed_total{class="read"} 9
kvserver_admission_completed_total{class="write"} 3
# HELP kvserver_admission_queue_depth Requests waiting for a slot of their class now.
# TYPE kvserver_admission_queue_depth gauge
kvserver_admission_queue_depth{class="read"} 1
kvserver_admission_queue_depth{class="write"} 0
# HELP kvserver_admission_write_paced 1 while writes are held to what the store's flushes and compactions absorb, else 0.
# TYPE kvserver_admission_write_paced gauge
kvserver_admission_write_paced 0
# HELP kvserver_admission_write_rate_bytes Bytes a second writes may enter the store at while paced; 0 when they are not (see kvserver_admission_write_paced).
# TYPE kvserver_admission_write_rate_bytes gauge
kvserver_admission_write_rate_bytes 0
# HELP kvserver_admission_io_overload How close the store is to holding every write back: the larger of the memtables' share of their stall point and L0's sublevels' share of theirs; 1 is a write stall.
# TYPE kvserver_admission_io_overload gauge
kvserver_admission_io_overload 0.75
# HELP kvserver_admission_write_paced_seconds_total Seconds writes were paced, by the store's queue that set the rate (memtables: one waits for its flush; l0: L0 has sublevels past the compaction point).
# TYPE kvserver_admission_write_paced_seconds_total counter
kvserver_admission_write_paced_seconds_total{cause="l0"} 1.5
kvserver_admission_write_paced_seconds_total{cause="memtables"} 0
`, "kvserver_admission_completed_total", "kvserver_admission_queue_depth", "kvserver_admission_write_paced",
		"kvserver_admission_write_rate_bytes", "kvserver_admission_io_overload", "kvserver_admission_write_paced_seconds_total")
	pace = pool.PaceStats{Rate: 8 << 20, Delayed: 7, DelayTotal: 2 * time.Second}
	gather(`
# HELP kvserver_admission_write_paced 1 while writes are held to what the store's flushes and compactions absorb, else 0.
# TYPE kvserver_admission_write_paced gauge
kvserver_admission_write_paced 1
# HELP kvserver_admission_write_rate_bytes Bytes a second writes may enter the store at while paced; 0 when they are not (see kvserver_admission_write_paced).
# TYPE kvserver_admission_write_rate_bytes gauge
kvserver_admission_write_rate_bytes 8.388608e+06
# HELP kvserver_admission_write_delayed_total Writes that waited for their share of the paced rate.
# TYPE kvserver_admission_write_delayed_total counter
kvserver_admission_write_delayed_total 7
`, "kvserver_admission_write_paced", "kvserver_admission_write_rate_bytes", "kvserver_admission_write_delayed_total")
	mfs, err := reg.Gather()
	require.NoError(t, err)
	refused := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "kvserver_admission_rejected_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var class, reason string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "class":
					class = l.GetValue()
				case "reason":
					reason = l.GetValue()
				}
			}
			refused[class+"/"+reason] = m.GetCounter().GetValue()
		}
	}
	assert.Len(t, refused, 2*pool.NumReasons, "every reason of both classes, at 0 until one comes")
	assert.Equal(t, 5.0, refused["write/io"])
	assert.Zero(t, refused["read/io"])
}

func TestPoolCollectorReadsStatsAtScrape(t *testing.T) {
	reg := prometheus.NewRegistry()
	var s pool.Stats
	p := NewPool(reg, "fifo", func() pool.Stats { return s })
	s.Submitted, s.Completed, s.Queued, s.Busy, s.Workers, s.Capacity = 10, 7, 2, 1, 4, 1024
	s.Rejected[pool.ReasonFull], s.Rejected[pool.ReasonDeadline] = 1, 2
	p.ObserveWait(3 * time.Millisecond)

	want := `
# HELP kvserver_pool_queue_depth Tasks waiting in the queue now.
# TYPE kvserver_pool_queue_depth gauge
kvserver_pool_queue_depth{pool="fifo"} 2
# HELP kvserver_pool_rejected_total Tasks answered 503 without running, by reason.
# TYPE kvserver_pool_rejected_total counter
kvserver_pool_rejected_total{pool="fifo",reason="abandoned"} 0
kvserver_pool_rejected_total{pool="fifo",reason="closed"} 0
kvserver_pool_rejected_total{pool="fifo",reason="deadline"} 2
kvserver_pool_rejected_total{pool="fifo",reason="dropped"} 0
kvserver_pool_rejected_total{pool="fifo",reason="expired"} 0
kvserver_pool_rejected_total{pool="fifo",reason="full"} 1
kvserver_pool_rejected_total{pool="fifo",reason="io"} 0
kvserver_pool_rejected_total{pool="fifo",reason="retry"} 0
# HELP kvserver_pool_completed_total Tasks the pool ran to completion.
# TYPE kvserver_pool_completed_total counter
kvserver_pool_completed_total{pool="fifo"} 7
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want),
		"kvserver_pool_queue_depth", "kvserver_pool_rejected_total", "kvserver_pool_completed_total"))

	s.Queued = 5 // a later scrape sees the new value
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP kvserver_pool_queue_depth Tasks waiting in the queue now.
# TYPE kvserver_pool_queue_depth gauge
kvserver_pool_queue_depth{pool="fifo"} 5
`), "kvserver_pool_queue_depth"))
	count, err := testutil.GatherAndCount(reg, "kvserver_pool_queue_wait_seconds")
	require.NoError(t, err)
	assert.Equal(t, 1, count)
}
