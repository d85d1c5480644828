// Package server serves the /v0 key-value API over fasthttp, handing each
// store operation to the configured worker pool.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"

	"github.com/kvpool/kvpool/internal/metrics"
	"github.com/kvpool/kvpool/internal/pool"
	"github.com/kvpool/kvpool/internal/store"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// Server is a running kvserver: store, pool, metrics and HTTP front end.
type Server struct {
	cfg   Config
	log   *slog.Logger
	store *store.Pebble
	pool  pool.Pool
	jobs  *jobPool
	http  *fasthttp.Server
	reqs  *metrics.HTTP

	metricsHandler fasthttp.RequestHandler
	pprofHandler   fasthttp.RequestHandler
}

// Open opens the store and starts the pool; Serve then answers requests.
// On error nothing is left open.
func Open(cfg Config, log *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	runtime.SetMutexProfileFraction(cfg.MutexProfileFraction)
	runtime.SetBlockProfileRate(cfg.BlockProfileRate)

	st, err := store.Open(store.Options{
		Dir:        cfg.DataDir,
		Sync:       cfg.Sync,
		CacheBytes: int64(cfg.CacheMiB) << 20,
		Logger:     log,
	})
	if err != nil {
		return nil, err
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics.NewPebble(reg, st.Metrics)

	s := &Server{cfg: cfg, log: log, store: st, jobs: newJobPool(st), reqs: metrics.NewHTTP(reg)}
	// The pool collector reads Stats at scrape time; the pool reports
	// queue waits to it. Neither needs the other to exist first.
	pm := metrics.NewPool(reg, cfg.Pool, func() pool.Stats { return s.pool.Stats() })
	pcfg := cfg.Pcfg
	pcfg.OnWait = pm.ObserveWait
	if s.pool, err = pool.New(cfg.Pool, pcfg); err != nil {
		st.Close()
		return nil, err
	}

	s.metricsHandler = fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	s.pprofHandler = fasthttpadaptor.NewFastHTTPHandler(pprofMux())
	// The limits, and where fasthttp (v1.74) enforces them:
	//   - MaxRequestBodySize: a Content-Length above it is refused before
	//     any body byte is read or allocated; a chunked body is refused at
	//     the first chunk that would take it past the limit. Both reach
	//     parseError as ErrBodyTooLarge (413) and close the connection;
	//     expectContinue refuses the same before the client sends the body.
	//     A body within the limit is allocated at its declared length
	//     before it arrives: -max-conns x -max-body bounds that memory.
	//   - ReadBufferSize is the per-connection read buffer, which the
	//     request line and headers must fit: larger is ErrSmallBuffer (431).
	//   - ReadTimeout is one deadline for the whole request, headers and
	//     body, from its first byte (from accept for a connection's first
	//     request): a client trickling bytes is cut off by it (408).
	//     IdleTimeout bounds the wait for a keep-alive connection's next
	//     request; it is closed silently.
	//   - Concurrency caps the connections being served; the accept loop
	//     answers one more with 503 and closes it. -max-conns-per-ip is
	//     enforced before fasthttp, by perIPListener (429).
	s.http = &fasthttp.Server{
		Handler:            s.route,
		ErrorHandler:       s.parseError,
		ExpectHandler:      s.expectContinue,
		Name:               "kvserver",
		MaxRequestBodySize: cfg.MaxBodyBytes,
		ReadBufferSize:     cfg.MaxHeaderBytes,
		ReadTimeout:        cfg.ReadTimeout,
		WriteTimeout:       cfg.WriteTimeout,
		IdleTimeout:        cfg.IdleTimeout,
		Concurrency:        cfg.MaxConns,
		CloseOnShutdown:    true,
		Logger:             slogPrintf{log},
	}
	return s, nil
}

// pprofMux serves what net/http/pprof serves: the index at /debug/pprof/,
// every named profile below it, and cmdline, profile, symbol and trace.
func pprofMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// Serve answers requests on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	if s.cfg.MaxConnsPerIP > 0 {
		ln = newPerIPListener(ln, s.cfg.MaxConnsPerIP, s.log)
	}
	return s.http.Serve(newFreshListener(ln))
}

// Listen opens the configured address.
func (s *Server) Listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %w; is another kvserver running? (-addr)", s.cfg.Addr, err)
	}
	return ln, nil
}

// Shutdown stops accepting connections, closes those on which no request
// has begun, waits (until ctx ends) for requests in flight to be answered,
// each on a connection that then closes, then closes the pool, which
// answers anything still queued, and the store. Every write acknowledged
// before it returns is in the store's WAL. Requests still in flight when
// ctx ends are not waited for: queued ones are answered 503 by the pool's
// close, later ones find it closed and get 503 too, if the process is
// still there to answer.
func (s *Server) Shutdown(ctx context.Context) error {
	herr := s.http.ShutdownWithContext(ctx)
	if errors.Is(herr, context.DeadlineExceeded) {
		s.log.Warn("shutdown deadline passed with requests in flight: queued ones are answered 503, the rest are not waited for", "timeout", s.cfg.ShutdownTimeout)
	}
	s.pool.Close()
	return errors.Join(herr, s.store.Close())
}

// PoolStats is the pool's current counters.
func (s *Server) PoolStats() pool.Stats { return s.pool.Stats() }

// slogPrintf adapts slog to fasthttp's Printf logger.
type slogPrintf struct{ l *slog.Logger }

func (p slogPrintf) Printf(format string, args ...any) {
	p.l.Warn(fmt.Sprintf(format, args...), "component", "fasthttp")
}
