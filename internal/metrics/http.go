// Package metrics holds the Prometheus collectors of kvserver: HTTP
// requests and connections, the worker pool, the Pebble store and the
// configuration. Pool and store counters are read at scrape time, so the
// request path pays nothing for them.
package metrics

import (
	"strconv"
	"time"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/prometheus/client_golang/prometheus"
)

// codes are the status codes kvserver answers with; their counters are
// resolved once so that counting a request is an array index, not a map
// lookup with label hashing.
var codes = []int{200, 201, 202, 400, 403, 404, 405, 408, 413, 429, 431, 500, 503}

// HTTP counts requests by method and status code and times them.
type HTTP struct {
	requests  *prometheus.CounterVec
	durations [api.NumMethods]prometheus.Observer
	known     [api.NumMethods][]prometheus.Counter // parallel to codes
}

// NewHTTP registers the HTTP collectors with reg.
func NewHTTP(reg prometheus.Registerer) *HTTP {
	h := &HTTP{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kvserver_http_requests_total",
			Help: "HTTP requests answered, by method and status code; method is \"unknown\" for a connection answered before its request line was read.",
		}, []string{"method", "code"}),
	}
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kvserver_http_request_duration_seconds",
		Help:    "Time from the handler's start to the response being ready, by method.",
		Buckets: prometheus.ExponentialBucketsRange(50e-6, 10, 20),
	}, []string{"method"})
	reg.MustRegister(h.requests, duration)
	for m := range api.NumMethods {
		label := api.Method(m).String()
		h.durations[m] = duration.WithLabelValues(label)
		h.known[m] = make([]prometheus.Counter, len(codes))
		for i, c := range codes {
			h.known[m][i] = h.requests.WithLabelValues(label, strconv.Itoa(c))
		}
	}
	return h
}

// Observe records one request the handler answered, and how long it took.
func (h *HTTP) Observe(m api.Method, code int, d time.Duration) {
	if int(m) >= api.NumMethods {
		m = api.Other
	}
	h.durations[m].Observe(d.Seconds())
	h.Add(m, code, 1)
}

// Add counts n answers given outside the handler (a request that could
// not be read, a connection refused at accept): no duration is recorded,
// as none was measured.
func (h *HTTP) Add(m api.Method, code int, n uint64) {
	if int(m) >= api.NumMethods {
		m = api.Other
	}
	for i, c := range codes {
		if c == code {
			h.known[m][i].Add(float64(n))
			return
		}
	}
	h.requests.WithLabelValues(m.String(), strconv.Itoa(code)).Add(float64(n))
}
