// Package bareserver is a fasthttp server with the shape of the kvserver
// API and none of its work: GET answers 200 with a short fixed body, PUT
// 201, DELETE 202. It is what a loader is measured against when the
// question is the loader's own cost (loadtest/bench-loader.sh), and, given a
// service time, what two loaders' percentiles are compared against.
package bareserver

import (
	"fmt"
	"math/rand/v2"
	"net"
	"time"

	"github.com/valyala/fasthttp"
)

// Body is what every GET returns.
var Body = []byte("bare")

// Handler answers every request without looking at it beyond the method.
func Handler(ctx *fasthttp.RequestCtx) {
	switch {
	case ctx.IsGet():
		ctx.SetStatusCode(fasthttp.StatusOK)
		ctx.SetBody(Body)
	case ctx.IsPut():
		ctx.SetStatusCode(fasthttp.StatusCreated)
	case ctx.IsDelete():
		ctx.SetStatusCode(fasthttp.StatusAccepted)
	default:
		ctx.SetStatusCode(fasthttp.StatusMethodNotAllowed)
	}
}

// WithServiceTime wraps h so that each request first sleeps for an
// exponentially distributed time of the given mean (p50 = 0.69·mean, p99 =
// 4.6·mean): a service time with a tail, long enough that the server's
// latency, not each loader's own few tens of microseconds, is what two
// loaders report. A mean of 0 returns h itself.
func WithServiceTime(h fasthttp.RequestHandler, mean time.Duration) fasthttp.RequestHandler {
	if mean <= 0 {
		return h
	}
	return func(ctx *fasthttp.RequestCtx) {
		sleep(time.Duration(rand.ExpFloat64() * float64(mean)))
		h(ctx)
	}
}

// Listen opens a TCP listener on addr, which must be a loopback address
// ("127.0.0.1:0" picks a free port): this server is for measurements on
// this machine only.
func Listen(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("bare server address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("bare server address %q is not loopback; use 127.0.0.1:PORT", addr)
	}
	return net.Listen("tcp", addr)
}

// New returns the server, whose requests each take serviceTime on average
// (see WithServiceTime; 0: none); call Serve(ln) and, to stop, Shutdown.
func New(serviceTime time.Duration) *fasthttp.Server {
	return &fasthttp.Server{
		Handler:               WithServiceTime(Handler, serviceTime),
		Name:                  "bare",
		NoDefaultDate:         true,
		NoDefaultContentType:  true,
		NoDefaultServerHeader: true,
	}
}
