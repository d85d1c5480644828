package metrics

import "github.com/prometheus/client_golang/prometheus"

// ConnErrors counts the errors that ended a connection, by kind.
type ConnErrors struct{ total *prometheus.CounterVec }

// Connection error kinds. The first four are a client hanging up or the
// server stopping, a normal part of serving; Other is anything else.
const (
	ConnClosed     = "closed"      // the server closed it (shutdown, idle sweep)
	ConnReset      = "reset"       // the client reset it
	ConnBrokenPipe = "broken_pipe" // the client left before the answer was written
	ConnEOF        = "eof"         // the client closed it mid-request
	ConnOther      = "other"
)

// ConnErrorKinds lists every kind, in the order above.
var ConnErrorKinds = []string{ConnClosed, ConnReset, ConnBrokenPipe, ConnEOF, ConnOther}

// NewConnErrors registers kvserver_http_connection_errors_total with reg,
// every kind at 0 so that a rate over it is defined from the start.
func NewConnErrors(reg prometheus.Registerer) *ConnErrors {
	c := &ConnErrors{total: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kvserver_http_connection_errors_total",
		Help: "Connections that ended with an error, by kind: closed, reset, broken_pipe and eof are clients hanging up or the server stopping; other is worth a look.",
	}, []string{"kind"})}
	for _, k := range ConnErrorKinds {
		c.total.WithLabelValues(k)
	}
	reg.MustRegister(c.total)
	return c
}

// Inc counts one connection error of kind.
func (c *ConnErrors) Inc(kind string) { c.total.WithLabelValues(kind).Inc() }
