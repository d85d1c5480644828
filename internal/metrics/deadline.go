package metrics

import "github.com/prometheus/client_golang/prometheus"

// Deadlines counts what became of the requests that carried a deadline
// (api.HeaderRequestTimeout). Only those touch it: a request without the
// header costs it nothing.
type Deadlines struct {
	requests, wasted prometheus.Counter
	dropped          [2]prometheus.Counter // by stage: pool, store
}

// NewDeadlines registers the deadline counters with reg.
func NewDeadlines(reg prometheus.Registerer) *Deadlines {
	dropped := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kvserver_deadline_dropped_total",
		Help: "Requests answered 503 (X-Shed-Reason: deadline), unrun, because their deadline passed before their store operation began, " +
			"by where: stage=\"pool\" (in the pool's queue, or found late where the job would start), " +
			"stage=\"store\" (waiting for one of -io-concurrency slots).",
	}, []string{"stage"})
	d := &Deadlines{
		requests: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kvserver_deadline_requests_total",
			Help: "Requests that carried a deadline (X-Request-Timeout-Ms).",
		}),
		wasted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kvserver_deadline_wasted_total",
			Help: "Requests whose store operation ran and finished after their deadline: work done for a client that had stopped waiting.",
		}),
		dropped: [2]prometheus.Counter{dropped.WithLabelValues("pool"), dropped.WithLabelValues("store")},
	}
	reg.MustRegister(d.requests, d.wasted, dropped)
	return d
}

// Request counts a request that carried a deadline.
func (d *Deadlines) Request() { d.requests.Inc() }

// Outcome counts how a request with a deadline ended: dropped for it (by
// the store stand-in if inStore, else by the pool), or run and finished
// past it (wasted), or neither.
func (d *Deadlines) Outcome(dropped, inStore, wasted bool) {
	switch {
	case dropped && inStore:
		d.dropped[1].Inc()
	case dropped:
		d.dropped[0].Inc()
	case wasted:
		d.wasted.Inc()
	}
}
