package metrics

import (
	"time"

	"github.com/kvpool/kvpool/internal/store"
	"github.com/prometheus/client_golang/prometheus"
)

// IO exports the store stand-in's finite capacity (-io-concurrency): its
// state, read from Stats at scrape time, and the wait for a slot, fed
// through ObserveWait. It is registered only when -io-concurrency is set.
type IO struct {
	stats func() store.BoundedStats
	wait  prometheus.Histogram

	inProgress, waiting, capacity, gaveUp *prometheus.Desc
}

// NewIO registers the stand-in's collectors; stats is called at each scrape.
func NewIO(reg prometheus.Registerer, stats func() store.BoundedStats) *IO {
	io := &IO{
		stats: stats,
		wait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "kvserver_io_wait_seconds",
			Help:    "Time store operations waited for one of -io-concurrency slots (0 for one that found a slot free), those that gave up at their deadline included.",
			Buckets: prometheus.ExponentialBucketsRange(1e-6, 10, 22),
		}),
		inProgress: prometheus.NewDesc("kvserver_io_in_progress", "Store operations holding one of -io-concurrency slots now.", nil, nil),
		waiting:    prometheus.NewDesc("kvserver_io_waiting", "Store operations waiting for a slot now, in arrival order.", nil, nil),
		capacity:   prometheus.NewDesc("kvserver_io_concurrency", "The slots: store operations allowed in progress at once (-io-concurrency).", nil, nil),
		gaveUp: prometheus.NewDesc("kvserver_io_deadline_total",
			"Store operations that gave up waiting for a slot because their request's deadline passed (answered 503 deadline, the store untouched).", nil, nil),
	}
	reg.MustRegister(io, io.wait)
	return io
}

// ObserveWait records one operation's wait for a slot; it is the stand-in's
// BoundedOptions.OnWait.
func (io *IO) ObserveWait(d time.Duration) { io.wait.Observe(d.Seconds()) }

// Describe implements prometheus.Collector.
func (io *IO) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{io.inProgress, io.waiting, io.capacity, io.gaveUp} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (io *IO) Collect(ch chan<- prometheus.Metric) {
	s := io.stats()
	ch <- prometheus.MustNewConstMetric(io.inProgress, prometheus.GaugeValue, float64(s.InProgress))
	ch <- prometheus.MustNewConstMetric(io.waiting, prometheus.GaugeValue, float64(s.Waiting))
	ch <- prometheus.MustNewConstMetric(io.capacity, prometheus.GaugeValue, float64(s.Capacity))
	ch <- prometheus.MustNewConstMetric(io.gaveUp, prometheus.CounterValue, float64(s.GaveUp))
}
