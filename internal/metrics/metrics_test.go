package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/kvpool/kvpool/internal/pool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHTTPCountsKnownAndUnknownCodes(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := NewHTTP(reg)
	h.Observe(GET, 200, time.Millisecond)
	h.Observe(GET, 200, time.Millisecond)
	h.Observe(PUT, 418, time.Millisecond) // not pre-resolved: still counted
	h.Observe(Method(200), 200, 0)        // out of range: counted as other

	assert.Equal(t, 2.0, testutil.ToFloat64(h.requests.WithLabelValues("GET", "200")))
	assert.Equal(t, 1.0, testutil.ToFloat64(h.requests.WithLabelValues("PUT", "418")))
	assert.Equal(t, 1.0, testutil.ToFloat64(h.requests.WithLabelValues("other", "200")))
	n, err := testutil.GatherAndCount(reg, "kvserver_http_request_duration_seconds")
	require.NoError(t, err)
	assert.Equal(t, int(numMethods), n)
}

func TestPoolCollectorReadsStatsAtScrape(t *testing.T) {
	reg := prometheus.NewRegistry()
	var s pool.Stats
	p := NewPool(reg, "fifo", func() pool.Stats { return s })
	s.Submitted, s.Completed, s.Queued, s.Busy, s.Workers, s.Capacity = 10, 7, 2, 1, 4, 1024
	s.Rejected[pool.ReasonFull] = 1
	p.ObserveWait(3 * time.Millisecond)

	want := `
# HELP kvserver_pool_queue_depth Tasks waiting in the queue now.
# TYPE kvserver_pool_queue_depth gauge
kvserver_pool_queue_depth{pool="fifo"} 2
# HELP kvserver_pool_rejected_total Tasks answered 503 without running, by reason.
# TYPE kvserver_pool_rejected_total counter
kvserver_pool_rejected_total{pool="fifo",reason="closed"} 0
kvserver_pool_rejected_total{pool="fifo",reason="dropped"} 0
kvserver_pool_rejected_total{pool="fifo",reason="expired"} 0
kvserver_pool_rejected_total{pool="fifo",reason="full"} 1
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
