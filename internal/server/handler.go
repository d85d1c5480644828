package server

import (
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/pool"
	"github.com/valyala/fasthttp"
)

const (
	pathEntity  = api.PathEntity
	pathStatus  = api.PathStatus
	pathMetrics = "/metrics"
	pprofPrefix = "/debug/pprof/"
)

// route dispatches by path. Unknown paths are 400, not 404: the course's
// test suite, which this API stays compatible with, expects that.
func (s *Server) route(ctx *fasthttp.RequestCtx) {
	s.methods.take(&ctx.Request.Header) // answered here, not by parseError
	headers := scanHeaders(&ctx.Request.Header)
	if headers.problem != "" {
		s.refuseFraming(ctx, headers.problem)
		return
	}
	path := ctx.Path()
	switch string(path) { // a switch on string(bytes) does not allocate
	case pathEntity:
		s.entity(ctx, &headers)
		// ctx.Time is when fasthttp began serving the request: one clock
		// read fewer per request than taking our own start time.
		s.reqs.Observe(methodOf(ctx), ctx.Response.StatusCode(), time.Since(ctx.Time()))
	case pathStatus:
		ctx.SetBodyString("OK")
		s.reqs.Observe(methodOf(ctx), fasthttp.StatusOK, 0)
	case pathMetrics:
		s.metricsHandler(ctx)
	default:
		if len(path) >= len(pprofPrefix) && string(path[:len(pprofPrefix)]) == pprofPrefix {
			s.pprof(ctx)
			return
		}
		fail(ctx, "unknown path; the API is /v0/entity?id=KEY", fasthttp.StatusBadRequest)
		s.reqs.Observe(methodOf(ctx), fasthttp.StatusBadRequest, 0)
	}
}

// refuseFraming answers a request whose body framing is ambiguous 400 and
// closes the connection: whatever follows on it cannot be trusted.
func (s *Server) refuseFraming(ctx *fasthttp.RequestCtx, problem string) {
	fail(ctx, "ambiguous request framing: "+problem+"; send Content-Length or Transfer-Encoding: chunked, once", fasthttp.StatusBadRequest)
	ctx.SetConnectionClose()
	s.reqs.Observe(methodOf(ctx), fasthttp.StatusBadRequest, 0)
}

// pprof serves /debug/pprof/ to loopback clients, and to everyone with
// -pprof-remote: profiles expose memory contents and the command line,
// and a CPU profile or trace keeps the server busy for as long as asked.
func (s *Server) pprof(ctx *fasthttp.RequestCtx) {
	if !s.cfg.PprofRemote && !ctx.RemoteIP().IsLoopback() {
		fail(ctx, "/debug/pprof/ is served to loopback clients only; start kvserver with -pprof-remote to serve it to others", fasthttp.StatusForbidden)
		s.reqs.Observe(methodOf(ctx), fasthttp.StatusForbidden, 0)
		return
	}
	s.pprofHandler(ctx)
}

func methodOf(ctx *fasthttp.RequestCtx) api.Method { return api.ParseMethod(ctx.Method()) }

// entity serves GET, PUT and DELETE of /v0/entity?id=KEY. It validates on
// the handler goroutine (the id, the method, the deadline header), puts key
// and body into a job (borrowed where the pool runs the job on this
// goroutine, copied where a worker runs it: see job), submits the job and
// waits for the pool to run or reject it.
func (s *Server) entity(ctx *fasthttp.RequestCtx, headers *headerFacts) {
	args := ctx.QueryArgs()
	key := args.Peek("id")
	switch {
	case len(key) == 0:
		fail(ctx, "missing or empty id parameter", fasthttp.StatusBadRequest)
		return
	case len(key) > s.cfg.MaxKeyBytes:
		fail(ctx, "id longer than "+strconv.Itoa(s.cfg.MaxKeyBytes)+" bytes (-max-key)", fasthttp.StatusBadRequest)
		return
	case args.Len() > 1 && repeatedID(args):
		fail(ctx, "id given more than once", fasthttp.StatusBadRequest)
		return
	}

	m := methodOf(ctx)
	if m != api.Get && m != api.Put && m != api.Delete {
		fail(ctx, "method not allowed; use GET, PUT or DELETE", fasthttp.StatusMethodNotAllowed)
		ctx.Response.Header.Set("Allow", "GET, PUT, DELETE")
		return
	}

	wait, bad := headers.clientWait()
	if bad != "" {
		fail(ctx, bad, fasthttp.StatusBadRequest)
		return
	}
	retry, bad := headers.retry()
	if bad != "" {
		fail(ctx, bad, fasthttp.StatusBadRequest)
		return
	}
	var deadline int64
	if wait > 0 {
		deadline = requestDeadline(ctx, wait)
		s.deadlines.Request()
	}

	var body []byte
	if m == api.Put {
		body = ctx.PostBody()
	}
	j := s.jobs.get(m, key, body)
	j.deadline, j.conn, j.retry = deadline, ctx.Conn(), retry
	s.pool.Submit(j)
	j.wait()
	s.respond(ctx, j)
	s.jobs.put(j)
}

func (s *Server) respond(ctx *fasthttp.RequestCtx, j *job) {
	if j.deadline != 0 {
		s.deadlines.Outcome(j.status == fasthttp.StatusServiceUnavailable && j.reason == pool.ReasonDeadline, j.inStore, j.wasted)
	}
	switch j.status {
	case fasthttp.StatusOK:
		ctx.SetContentType("application/octet-stream")
		// The value read becomes the response's body as it is, not
		// copied: the job takes the response's previous body buffer in
		// exchange, so neither is shared when j goes back to the pool.
		j.out = ctx.Response.SwapBody(j.out)[:0]
	case fasthttp.StatusServiceUnavailable:
		s.shed(ctx, j)
	case fasthttp.StatusInternalServerError:
		s.log.Error("store operation failed", "err", j.err)
		fail(ctx, "store error", fasthttp.StatusInternalServerError)
	default:
		ctx.SetStatusCode(j.status)
	}
}

// repeatedID reports whether the query holds more than one id parameter:
// which one was meant is ambiguous, so the request is refused.
func repeatedID(args *fasthttp.Args) bool {
	n := 0
	for k := range args.All() {
		if string(k) == "id" {
			n++
		}
	}
	return n > 1
}

// parseError answers requests fasthttp could not read; fasthttp then
// closes the connection.
func (s *Server) parseError(ctx *fasthttp.RequestCtx, err error) {
	method := s.methodRead(ctx)
	var small *fasthttp.ErrSmallBuffer
	var netErr net.Error
	code, msg := fasthttp.StatusBadRequest, "malformed request"
	switch {
	case errors.Is(err, net.ErrClosed):
		return // Shutdown closed a connection that had sent nothing: no one to answer
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		code, msg = fasthttp.StatusRequestEntityTooLarge, "body larger than "+strconv.Itoa(s.cfg.MaxBodyBytes)+" bytes (-max-body)"
	case errors.As(err, &small):
		code, msg = fasthttp.StatusRequestHeaderFieldsTooLarge, "request line and headers larger than "+strconv.Itoa(s.cfg.MaxHeaderBytes)+" bytes (-max-header)"
	case errors.As(err, &netErr) && netErr.Timeout():
		code, msg = fasthttp.StatusRequestTimeout, "request not received within -read-timeout"
	}
	fail(ctx, msg, code)
	s.reqs.Add(method, code, 1)
}

// methodRead is the method of a request fasthttp could not finish
// reading, or api.Unknown if its headers were not read. Where reading
// the headers failed, fasthttp (v1.74) has reset them, and the method
// reads as GET, its default; where the body failed it has reset the
// whole request, and only the memo still knows the method.
func (s *Server) methodRead(ctx *fasthttp.RequestCtx) api.Method {
	if m, ok := s.methods.take(&ctx.Request.Header); ok {
		return m
	}
	return api.Unknown
}

// expectContinue answers "Expect: 100-continue": a body declared larger
// than -max-body is refused with 413 before the client sends it (curl asks
// this way for bodies over 1 MiB), and so is a request whose framing is
// ambiguous, with 400; anything else may proceed. fasthttp closes the
// connection after either refusal.
func (s *Server) expectContinue(ctx *fasthttp.RequestCtx) int {
	code := fasthttp.StatusContinue
	switch {
	case framingProblem(&ctx.Request.Header) != "":
		code = fasthttp.StatusBadRequest
	case ctx.Request.Header.ContentLength() > s.cfg.MaxBodyBytes:
		code = fasthttp.StatusRequestEntityTooLarge
	}
	if code != fasthttp.StatusContinue {
		s.methods.take(&ctx.Request.Header) // answered here; the connection closes
		s.reqs.Add(methodOf(ctx), code, 1)
	}
	return code
}

// fail answers with a plain-text message. Unlike ctx.Error it keeps the
// headers already set.
func fail(ctx *fasthttp.RequestCtx, msg string, code int) {
	ctx.SetStatusCode(code)
	ctx.SetContentType("text/plain; charset=utf-8")
	ctx.SetBodyString(msg)
}
