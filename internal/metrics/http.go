// Package metrics holds the Prometheus collectors of kvserver: HTTP
// requests, the worker pool and the Pebble store. Pool and store counters
// are read at scrape time, so the request path pays nothing for them.
package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Method is an HTTP method as the metrics label it; anything else is Other.
type Method uint8

// The methods labelled individually.
const (
	GET Method = iota
	PUT
	DELETE
	Other
	numMethods
)

var methodNames = [numMethods]string{"GET", "PUT", "DELETE", "other"}

// codes are the status codes kvserver answers with; their counters are
// resolved once so that counting a request is an array index, not a map
// lookup with label hashing.
var codes = []int{200, 201, 202, 400, 404, 405, 413, 431, 500, 503}

// HTTP counts requests by method and status code and times them.
type HTTP struct {
	requests  *prometheus.CounterVec
	durations [numMethods]prometheus.Observer
	known     [numMethods][]prometheus.Counter // parallel to codes
}

// NewHTTP registers the HTTP collectors with reg.
func NewHTTP(reg prometheus.Registerer) *HTTP {
	h := &HTTP{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kvserver_http_requests_total",
			Help: "HTTP requests answered, by method and status code.",
		}, []string{"method", "code"}),
	}
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kvserver_http_request_duration_seconds",
		Help:    "Time from the handler's start to the response being ready, by method.",
		Buckets: prometheus.ExponentialBucketsRange(50e-6, 10, 20),
	}, []string{"method"})
	reg.MustRegister(h.requests, duration)
	for m := range numMethods {
		h.durations[m] = duration.WithLabelValues(methodNames[m])
		h.known[m] = make([]prometheus.Counter, len(codes))
		for i, c := range codes {
			h.known[m][i] = h.requests.WithLabelValues(methodNames[m], strconv.Itoa(c))
		}
	}
	return h
}

// Observe records one answered request.
func (h *HTTP) Observe(m Method, code int, d time.Duration) {
	if m >= numMethods {
		m = Other
	}
	h.durations[m].Observe(d.Seconds())
	for i, c := range codes {
		if c == code {
			h.known[m][i].Inc()
			return
		}
	}
	h.requests.WithLabelValues(methodNames[m], strconv.Itoa(code)).Inc()
}
