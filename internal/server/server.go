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
	"regexp"
	"strconv"
	"sync"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/metrics"
	"github.com/kvpool/kvpool/internal/pool"
	"github.com/kvpool/kvpool/internal/store"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// Server is the HTTP front end of a store: routing, the worker pool and
// the metrics.
type Server struct {
	cfg       Config
	log       *slog.Logger
	pool      pool.Pool
	drainer   pool.Drainer // pool, where it can tell its drain time; else nil
	jobs      *jobPool
	http      *fasthttp.Server
	reqs      *metrics.HTTP
	deadlines *metrics.Deadlines
	methods   methodMemo // for requests fasthttp discards before parseError
	connErrs  *connErrorLog

	metricsHandler fasthttp.RequestHandler
	pprofHandler   fasthttp.RequestHandler

	// mu and refusedMu are never held together.
	mu       sync.Mutex
	ln       *freshListener // the listener Serve took, nil before
	shutdown bool           // Shutdown has begun: Serve must not start

	// stopping is closed by Shutdown once no connection can be accepted
	// any more (the listener is closed, or Serve will refuse to start).
	stopping     chan struct{}
	stoppingOnce sync.Once

	refusedMu   sync.Mutex
	refusedSeen uint32 // fasthttp's count of -max-conns refusals already in reqs

	// firstByte, if set before Serve, is called when a connection's first
	// bytes have been read: tests wait on it for "the server has taken
	// this request on" (fasthttp's StateActive comes before any byte).
	firstByte func()

	// io paces the pool's writes by the store's health, where the pool
	// paces writes (auto) and the store is Pebble; nil otherwise. Its
	// goroutine runs until ioStop is closed (Shutdown), then closes ioDone.
	io             *ioWatch
	ioStop, ioDone chan struct{}
	ioStopOnce     sync.Once
}

// Options are what a Server may be given besides its Config and store.
type Options struct {
	// Log receives the server's log lines; nil means slog.Default().
	Log *slog.Logger
	// PebbleMetrics, if set, is read at each scrape of /metrics and
	// exported as kvserver_pebble_*.
	PebbleMetrics func() store.PebbleMetrics
	// PebbleFlushes, if set, receives a value when one of the store's
	// flushes begins or ends (store.Pebble.FlushEvents): the write pacing
	// then looks at the store at once rather than at its next tick.
	PebbleFlushes <-chan struct{}
}

// schedLatencies picks the runtime's scheduling latencies from its
// metrics (runtime/metrics: /sched/latencies:seconds).
var schedLatencies = regexp.MustCompile(`^/sched/latencies:seconds$`)

// New starts the pool over st, behind the row cache (-row-cache-mb) and
// the stand-in for a remote store that cfg asks for (-io-delay,
// -io-concurrency); Serve then answers requests. st stays the caller's:
// close it after Shutdown has returned. On error nothing is left running.
func New(cfg Resolved, st store.Store, o Options) (*Server, error) {
	log := o.Log
	if log == nil {
		log = slog.Default()
	}
	reg := prometheus.NewRegistry()
	// Beside the Go collector's defaults, how long goroutines waited
	// runnable for a CPU (go_sched_latencies_seconds): on few CPUs a
	// request's latency can be mostly that wait, which no pool sees.
	reg.MustRegister(collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(
		collectors.GoRuntimeMetricsRule{Matcher: schedLatencies})),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if o.PebbleMetrics != nil {
		metrics.NewPebble(reg, o.PebbleMetrics)
	}
	if cfg.RowCacheMiB > 0 {
		// Next to Pebble, inside the stand-in for a remote store: the
		// cache is part of the store, and -io-delay and -io-concurrency
		// still stand for the network call to it, hit or miss.
		rc := store.NewRowCache(st, int64(cfg.RowCacheMiB)<<20, store.RowCacheOptions{})
		metrics.NewRowCache(reg, rc.Stats)
		st = rc
	}
	st = store.WithDelay(st, cfg.IODelay, cfg.IODelayDist)
	if cfg.IOConcurrency > 0 {
		// As for the pool below: the collector reads Stats at scrape
		// time, and the store reports waits to it.
		var bounded *store.Bounded
		io := metrics.NewIO(reg, func() store.BoundedStats { return bounded.Stats() })
		bounded = store.WithConcurrency(st, cfg.IOConcurrency, store.BoundedOptions{OnWait: io.ObserveWait})
		st = bounded
	}

	s := &Server{
		cfg: cfg.Config, log: log, reqs: metrics.NewHTTP(reg), deadlines: metrics.NewDeadlines(reg),
		connErrs: newConnErrorLog(log, metrics.NewConnErrors(reg)),
		stopping: make(chan struct{}),
	}
	// The pool collector reads Stats at scrape time; the pool reports
	// queue waits to it. Neither needs the other to exist first.
	pm := metrics.NewPool(reg, cfg.Pool, func() pool.Stats { return s.pool.Stats() })
	pcfg := cfg.PoolConfig // as Resolve checked it: pool.New builds it without a second look
	pcfg.OnWait = pm.ObserveWait
	var err error
	if s.pool, err = pool.New(cfg.Pool, pcfg); err != nil {
		return nil, err
	}
	s.watchIO(reg, o.PebbleMetrics, o.PebbleFlushes, log)
	// The pool says where it runs jobs, and so whether a job may borrow
	// the request's key and body (see job).
	s.drainer, _ = s.pool.(pool.Drainer)
	s.jobs = newJobPool(st, s.pool.RunsOnSubmitter())
	metrics.NewConfigInfo(reg, configLabels(cfg))

	gather := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		s.countRefusedConns()
		return reg.Gather()
	})
	s.metricsHandler = fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(gather, promhttp.HandlerOpts{}))
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
	//     answers one more with 503 and closes it (counted at scrape time,
	//     see countRefusedConns). -max-conns-per-ip is enforced before
	//     fasthttp, by perIPListener (429).
	s.http = &fasthttp.Server{
		Handler:            s.route,
		ErrorHandler:       s.parseError,
		ExpectHandler:      s.expectContinue,
		HeaderReceived:     s.methods.headerReceived,
		Name:               "kvserver",
		MaxRequestBodySize: cfg.MaxBodyBytes,
		ReadBufferSize:     cfg.MaxHeaderBytes,
		ReadTimeout:        cfg.ReadTimeout,
		WriteTimeout:       cfg.WriteTimeout,
		IdleTimeout:        cfg.IdleTimeout,
		Concurrency:        cfg.MaxConns,
		CloseOnShutdown:    true,
		Logger:             s.connErrs,
	}
	return s, nil
}

// watchIO exports the pool's two admissions where it has them (auto), and
// where it also paces writes and pebble reads the store's state, starts
// the goroutine that sets the pace from it (see ioWatch), woken by
// flushes as well where they are given.
func (s *Server) watchIO(reg prometheus.Registerer, pebble func() store.PebbleMetrics, flushes <-chan struct{}, log *slog.Logger) {
	classes, ok := s.pool.(pool.Classes)
	pacer, paces := s.pool.(pool.Pacer)
	if !ok || !paces {
		return
	}
	io := func() metrics.IOState { return metrics.IOState{} }
	if pebble != nil {
		s.io = newIOWatch(pacer, pebble, log)
		s.ioStop, s.ioDone = make(chan struct{}), make(chan struct{})
		go func() {
			defer close(s.ioDone)
			s.io.run(s.ioStop, flushes, ioWatchEvery)
		}()
		io = s.io.state
	}
	metrics.NewAdmission(reg, classes.ClassStats, pacer.Pace, io)
}

// stopIO stops the write pacing's goroutine, if there is one, and waits
// for it.
func (s *Server) stopIO() {
	if s.io == nil {
		return
	}
	s.ioStopOnce.Do(func() { close(s.ioStop) })
	<-s.ioDone
}

// configLabels are kvserver_config_info's labels: the settings a
// comparison of runs needs, as they are in effect (workers 0 is
// GOMAXPROCS, and direct's exec is handler, whatever -exec says).
func configLabels(cfg Resolved) prometheus.Labels {
	p := cfg.PoolConfig
	return prometheus.Labels{
		"pool":              cfg.Pool,
		"exec":              p.Exec.String(),
		"limit":             limitName(p.Limit),
		"workers":           strconv.Itoa(p.Workers),
		"cap":               strconv.Itoa(p.Capacity),
		"overflow":          p.Overflow.String(),
		"queue_timeout":     p.QueueTimeout.String(),
		"max_wait":          maxWaitText(p.MaxWait),
		"sync":              strconv.FormatBool(cfg.Sync),
		"cache_mb":          strconv.Itoa(cfg.CacheMiB),
		"row_cache_mb":      strconv.Itoa(cfg.RowCacheMiB),
		"version":           metrics.Version(),
		"io_delay":          cfg.IODelay.String(),
		"io_delay_dist":     string(cfg.IODelayDist),
		"io_concurrency":    strconv.Itoa(cfg.IOConcurrency),
		"drop_closed_after": p.AbandonAfter.String(),
	}
}

// countRefusedConns brings kvserver_http_requests_total{method="unknown",
// code="503"} up to fasthttp's own count of connections its accept loop
// refused over -max-conns: that loop calls none of our code.
func (s *Server) countRefusedConns() {
	s.refusedMu.Lock()
	defer s.refusedMu.Unlock()
	n := s.http.GetRejectedConnectionsCount()
	if n > s.refusedSeen {
		s.reqs.Add(api.Unknown, fasthttp.StatusServiceUnavailable, uint64(n-s.refusedSeen))
		s.refusedSeen = n
	}
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

// Listen opens addr for Serve. cmd/kvserver calls it before opening the
// store, so that a busy port fails a start before anything is created.
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %w; is another kvserver running? (-addr)", addr, err)
	}
	return ln, nil
}

// Serve answers requests on ln until Shutdown, then returns nil. It takes
// ln over and closes it. Once Shutdown has been called, Serve returns at
// once, also when it is called after Shutdown: a stop requested while the
// process is still starting is not lost.
func (s *Server) Serve(ln net.Listener) error {
	if s.cfg.MaxConnsPerIP > 0 {
		ln = newPerIPListener(ln, s.cfg.MaxConnsPerIP, s.log, func() {
			s.reqs.Add(api.Unknown, fasthttp.StatusTooManyRequests, 1)
		})
	}
	fl := newFreshListener(ln, s.firstByte)
	s.mu.Lock()
	switch {
	case s.shutdown:
		s.mu.Unlock()
		fl.Close()
		return nil
	case s.ln != nil:
		s.mu.Unlock()
		fl.Close()
		return errors.New("server: Serve called twice")
	}
	s.ln = fl
	s.mu.Unlock()
	// If Shutdown runs before fasthttp has registered fl, fasthttp's own
	// shutdown finds nothing to close; Shutdown has closed fl itself, so
	// the accept loop ends at its first Accept either way.
	return s.http.Serve(lazyDeadlineListener{fl})
}

// Shutdown stops accepting connections, closes those on which no request
// has begun, waits (until ctx ends) for requests in flight to be answered,
// each on a connection that then closes, then closes the pool, which
// answers anything still queued. Every write acknowledged before it
// returns is in the store; closing the store is then the caller's. Requests
// still in flight when ctx ends are not waited for: queued ones are
// answered 503 by the pool's close, later ones find it closed and get 503
// too, if the process is still there to answer. Shutdown may be called
// before Serve, or more than once.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.shutdown = true
	ln := s.ln
	s.mu.Unlock()
	if ln != nil {
		ln.Close() // idempotent; fasthttp closes it again
	}
	s.stoppingOnce.Do(func() { close(s.stopping) })

	herr := s.http.ShutdownWithContext(ctx)
	if errors.Is(herr, context.DeadlineExceeded) {
		s.log.Warn("shutdown deadline passed with requests in flight: queued ones are answered 503, the rest are not waited for", "timeout", s.cfg.ShutdownTimeout)
	}
	s.stopIO() // lifts the pace: writes still queued are answered at once
	s.pool.Close()
	return herr
}

// PoolStats is the pool's current counters.
func (s *Server) PoolStats() pool.Stats { return s.pool.Stats() }
