package metrics

import (
	"time"

	"github.com/kvpool/kvpool/internal/pool"
	"github.com/prometheus/client_golang/prometheus"
)

// Pool exports a pool's counters, read from Stats at scrape time, and the
// queue-wait histogram, fed by the pool's workers through ObserveWait.
type Pool struct {
	stats func() pool.Stats
	wait  prometheus.Histogram

	submitted, completed, rejected *prometheus.Desc
	queued, busy, workers, capcty  *prometheus.Desc
	limit, limitChanges            *prometheus.Desc
}

// NewPool registers the collectors of the pool named name; stats is called
// at each scrape.
func NewPool(reg prometheus.Registerer, name string, stats func() pool.Stats) *Pool {
	labels := prometheus.Labels{"pool": name}
	desc := func(metric, help string, variable ...string) *prometheus.Desc {
		return prometheus.NewDesc("kvserver_pool_"+metric, help, variable, labels)
	}
	p := &Pool{
		stats: stats,
		wait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:        "kvserver_pool_queue_wait_seconds",
			Help:        "Time tasks spent queued before a worker took them.",
			ConstLabels: labels,
			Buckets:     prometheus.ExponentialBucketsRange(1e-6, 10, 22),
		}),
		submitted: desc("submitted_total", "Tasks submitted to the pool."),
		completed: desc("completed_total", "Tasks the pool ran to completion."),
		rejected:  desc("rejected_total", "Tasks answered 503 without running, by reason.", "reason"),
		queued:    desc("queue_depth", "Tasks waiting in the queue now."),
		busy:      desc("busy_workers", "Tasks running now."),
		workers:   desc("workers", "Worker goroutines (-exec worker), or slots: tasks allowed to run at once (-exec handler)."),
		capcty:    desc("queue_capacity", "The queue bound; -1 for unbounded."),
		limit: desc("limit", "Tasks allowed to run at once now: -workers, or under -exec handler with -limit "+
			"gradient2, vegas or aimd the adaptive limit."),
		limitChanges: desc("limit_changes_total", "Changes of the adaptive limit (-limit)."),
	}
	reg.MustRegister(p, p.wait)
	return p
}

// ObserveWait records one task's queue wait; it is the pool's Config.OnWait.
func (p *Pool) ObserveWait(d time.Duration) { p.wait.Observe(d.Seconds()) }

// Describe implements prometheus.Collector.
func (p *Pool) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{p.submitted, p.completed, p.rejected, p.queued, p.busy, p.workers, p.capcty, p.limit, p.limitChanges} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (p *Pool) Collect(ch chan<- prometheus.Metric) {
	s := p.stats()
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v int) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v))
	}
	counter(p.submitted, s.Submitted)
	counter(p.completed, s.Completed)
	for r, n := range s.Rejected {
		counter(p.rejected, n, pool.Reason(r).String())
	}
	gauge(p.queued, s.Queued)
	gauge(p.busy, s.Busy)
	gauge(p.workers, s.Workers)
	gauge(p.capcty, s.Capacity)
	gauge(p.limit, s.Workers)
	counter(p.limitChanges, s.LimitChanges)
}
