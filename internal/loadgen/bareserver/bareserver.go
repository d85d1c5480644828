// Package bareserver is a fasthttp server with the shape of the kvserver
// API and none of its work: GET answers 200 with a short fixed body, PUT
// 201, DELETE 202. It is what a loader is measured against when the
// question is the loader's own cost (loadtest/bench-loader.sh).
package bareserver

import (
	"fmt"
	"net"

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

// New returns the server; call Serve(ln) and, to stop, Shutdown.
func New() *fasthttp.Server {
	return &fasthttp.Server{
		Handler:               Handler,
		Name:                  "bare",
		NoDefaultDate:         true,
		NoDefaultContentType:  true,
		NoDefaultServerHeader: true,
	}
}
