// Package pool is admission: it decides when, in what order and on which
// goroutine a submitted task runs, and which tasks it refuses. A queueing
// variant lets a bounded number of tasks run at once and orders the rest in
// its queue (FIFO, LIFO, Michael–Scott, multiqueue, adaptive); under
// ExecHandler a task runs on the goroutine that submitted it once admitted,
// under ExecWorker on one of a fixed set of worker goroutines. direct runs
// every task at once, on its submitter. Pool.RunsOnSubmitter says which of
// the two a pool does.
//
// Every variant implements Pool and keeps one promise: for every Task given
// to Submit, exactly one of Task.Run or Task.Reject is called, exactly once.
// Nothing is lost (a queued task is answered even when the pool closes) and
// nothing runs twice. A task whose deadline has passed by the time it would
// start is rejected, unrun (ReasonDeadline). The package knows nothing of
// HTTP or storage.
package pool

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"github.com/failsafe-go/failsafe-go/priority"

	"github.com/kvpool/kvpool/internal/limit"
	"github.com/kvpool/kvpool/internal/mono"
)

// Task is one unit of work. The pool calls exactly one of Run or Reject,
// exactly once. Either may be called on the submitting goroutine before
// Submit returns (direct execution, caller-runs, an immediate rejection) or
// later on a worker goroutine, so a Task must not assume which, unless the
// pool RunsOnSubmitter.
type Task interface {
	// Run does the work.
	Run()
	// Reject tells the submitter the work was not done and why.
	Reject(Reason)
	// Deadline is when the task's submitter stops waiting for it, on the
	// mono clock (mono.Now nanoseconds), or 0 for never. The pool reads it
	// where the task would start (at dequeue, at slot admission, before a
	// direct or caller-runs run, and while a blocked Submit waits for
	// room) and rejects a task past it with ReasonDeadline, unrun. It must
	// not change while the pool holds the task. Reading it must be cheap:
	// the clock is read only for tasks that have one.
	Deadline() int64
}

// Abandonable is a Task that can tell whether its submitter has gone
// (an HTTP client that closed its connection). A pool with
// Config.AbandonAfter asks a task that waited at least that long, where it
// would start, and rejects it with ReasonAbandoned, unrun, if it has been
// abandoned. Asking may cost a system call, which is why only tasks that
// waited are asked; tasks that never queued never are.
type Abandonable interface {
	Task
	Abandoned() bool
}

// Retried is a Task that can tell whether its submitter is trying it
// again after an attempt that failed (an HTTP client's retry, marked by
// an attempt count). A pool that bounds waits in time (Config.MaxWait)
// admits a retry freely while the wait it would expect is within half
// of the bound and refuses it past that with a probability that
// rises to 1 at the bound (Config.shedRetry), so that when the pool must
// shed, retries go first: a retry storm is what keeps an overloaded
// server overloaded.
type Retried interface {
	Task
	Retry() bool
}

// Writer is a Task that may say it changes the store (a PUT or a
// DELETE): the auto variant admits such tasks apart from those that only
// read, and paces them (see Pacer). bytes is what the write adds to the
// store (its key and value), the cost the pacer charges. Writes must be
// cheap and must not change while the pool holds the task.
type Writer interface {
	Task
	Writes() (bytes int, ok bool)
}

// isWrite reports whether t says it changes the store, and its bytes.
func isWrite(t Task) (int, bool) {
	if w, ok := t.(Writer); ok {
		return w.Writes()
	}
	return 0, false
}

// isRetry reports whether t says it is a retry.
func isRetry(t Task) bool {
	r, ok := t.(Retried)
	return ok && r.Retry()
}

// shedRetry tells whether a retry that would wait wait, where first
// tries may wait bound, is refused: never up to half of the bound
// (retryWaitShare), always past the bound, and in between with a
// probability that rises in proportion. Retries go first, so that a
// storm of them cannot hold the queue, but in proportion to the excess
// rather than all of them at once: a client refused at its first try
// whose retries all meet a refusal gives up, and its answer is lost
// while the store still had room for some of them.
func (c *Config) shedRetry(wait, bound time.Duration) bool {
	from := bound / retryWaitShare
	switch {
	case wait <= from:
		return false
	case wait >= bound:
		return true
	}
	draw := rand.Float64
	if c.draw != nil {
		draw = c.draw
	}
	return draw() < float64(wait-from)/float64(bound-from)
}

// Drainer is a Pool that can tell how long the tasks queued now ahead of
// t would take to reach a slot at the rate its slots serve them (and, for
// a paced write, until the store has absorbed the writes admitted before
// it): what an overloaded server's Retry-After should say to t's client.
// 0: nothing queued, or nothing measured yet. Cheap: a few atomic loads
// (a paced write's a lock).
type Drainer interface {
	Drain(t Task) time.Duration
}

// Pool accepts tasks and runs them on its workers.
type Pool interface {
	// Submit hands t to the pool. It never panics and never drops t: t is
	// run or rejected exactly once. Submit may block only under the
	// OverflowBlock policy, at most for Config.QueueTimeout.
	Submit(t Task)
	// Close stops accepting tasks (later ones are rejected with
	// ReasonClosed), rejects every task still queued with ReasonClosed and
	// waits for running tasks to finish. It is safe to call more than once.
	Close()
	// Stats returns a snapshot of the pool's counters.
	Stats() Stats
	// Name is the variant's name as accepted by New ("fifo", ...).
	Name() string
	// RunsOnSubmitter reports whether the pool calls Run and Reject on
	// the goroutine that called Submit, always before Submit returns
	// (direct, and every variant under ExecHandler). A submitter may then
	// lend a task buffers it owns only for the call, and needs no signal
	// back; otherwise a task must own what it reads and signal its answer
	// itself.
	RunsOnSubmitter() bool
}

// Every variant is a Pool.
var (
	_ Pool = (*Direct)(nil)
	_ Pool = (*FIFO)(nil)
	_ Pool = (*LIFO)(nil)
	_ Pool = (*MSQueue)(nil)
	_ Pool = (*MultiQueue)(nil)
	_ Pool = (*Adaptive)(nil)
	_ Pool = (*slotPool)(nil)
	_ Pool = (*failsafePool)(nil)
)

// Reason says why a task was rejected.
type Reason uint8

const (
	// ReasonFull: the queue was at capacity and the policy rejects newcomers.
	ReasonFull Reason = iota
	// ReasonDropped: the task was queued, then evicted to admit a newer one.
	ReasonDropped
	// ReasonExpired: the task waited in the queue longer than QueueTimeout.
	ReasonExpired
	// ReasonClosed: the pool was closed before the task ran.
	ReasonClosed
	// ReasonDeadline: the task's Deadline had passed where it would start
	// (or while its Submit waited for room).
	ReasonDeadline
	// ReasonAbandoned: the task waited past Config.AbandonAfter and its
	// submitter had gone (see Abandonable).
	ReasonAbandoned
	// ReasonRetry: the task was a retry (see Retried), and the queue
	// would have kept it waiting longer than a retry may wait (see
	// Config.MaxWait): retries are shed before first tries.
	ReasonRetry
	// ReasonIO: the task was a write (see Writer) while the store's
	// flushes and compactions were behind, and waiting for its share of
	// what they absorb would have taken longer than the bound (see
	// Pacer).
	ReasonIO

	// NumReasons is the number of reasons; Stats.Rejected is indexed by Reason.
	NumReasons = int(ReasonIO) + 1
)

var reasonNames = [NumReasons]string{"full", "dropped", "expired", "closed", "deadline", "abandoned", "retry", "io"}

func (r Reason) String() string {
	if int(r) < NumReasons {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", r)
}

// Overflow is what a bounded queue does with a task that finds it full.
type Overflow uint8

const (
	// OverflowReject rejects the newcomer with ReasonFull (Java's AbortPolicy).
	OverflowReject Overflow = iota
	// OverflowDropOldest rejects the oldest queued task with ReasonDropped
	// and admits the newcomer (DiscardOldestPolicy, but answered, not lost).
	OverflowDropOldest
	// OverflowCallerRuns runs the newcomer on the submitting goroutine.
	OverflowCallerRuns
	// OverflowBlock waits for room, at most QueueTimeout (0: until room or
	// Close), then rejects with ReasonFull.
	OverflowBlock
)

var overflowNames = []string{"reject", "drop-oldest", "caller-runs", "block"}

func (o Overflow) String() string {
	if int(o) < len(overflowNames) {
		return overflowNames[o]
	}
	return fmt.Sprintf("Overflow(%d)", o)
}

// ParseOverflow parses a policy name as printed by Overflow.String.
func ParseOverflow(s string) (Overflow, error) {
	for i, name := range overflowNames {
		if s == name {
			return Overflow(i), nil
		}
	}
	return 0, fmt.Errorf("unknown overflow policy %q; want one of %v", s, overflowNames)
}

// Exec is where a queueing variant runs a task it admits.
type Exec uint8

const (
	// ExecHandler runs an admitted task on the goroutine that submitted it
	// (the HTTP handler), once it holds one of the pool's slots: the queue
	// orders the waiting submitters, and a freed slot passes to the next
	// (see slotPool). Submit returns once the task has run or been
	// rejected.
	ExecHandler Exec = iota + 1
	// ExecWorker hands an admitted task to one of Workers worker
	// goroutines, through the queue or directly to an idle one (see
	// queuePool and FIFO); the submitter waits for its answer elsewhere.
	ExecWorker
)

// DefaultExec is what Config.Exec's zero value stands for, chosen by
// measurement (docs/pools.md, Performance).
const DefaultExec = ExecHandler

var execNames = map[Exec]string{ExecHandler: "handler", ExecWorker: "worker"}

func (e Exec) String() string {
	if n, ok := execNames[e]; ok {
		return n
	}
	return fmt.Sprintf("Exec(%d)", e)
}

// ParseExec parses an exec mode name as printed by Exec.String.
func ParseExec(s string) (Exec, error) {
	for e, name := range execNames {
		if s == name {
			return e, nil
		}
	}
	return 0, fmt.Errorf("unknown exec mode %q; want handler or worker", s)
}

// Unbounded as Config.Capacity asks for a queue without a bound, where the
// variant supports one.
const Unbounded = -1

// DefaultCapacity bounds the queue when no capacity is given: deep enough
// to absorb bursts, yet a full queue's wait stays far below the load lab's
// 100 ms SLO at the server's cost per request (tens of microseconds: 1,024
// of them wait a few tens of milliseconds on one CPU).
const DefaultCapacity = 1024

// Config is what every variant is built from. Zero values mean defaults.
type Config struct {
	// Exec is where admitted tasks run; 0 means DefaultExec. direct
	// always runs them in the handler.
	Exec Exec
	// Workers is the number of worker goroutines (ExecWorker) or of slots,
	// tasks running at once (ExecHandler, fixed limit); 0 means GOMAXPROCS.
	Workers int
	// Capacity bounds the queue; 0 means a direct hand-off to an idle
	// worker where the variant supports it, Unbounded means no bound.
	Capacity int
	// Overflow is the policy for a task that finds the queue full.
	Overflow Overflow
	// QueueTimeout, when positive, rejects with ReasonExpired a task that
	// waited longer than this by the time a worker takes it, without
	// running it: nobody is waiting for its answer any more. A task whose
	// Deadline comes first is rejected with ReasonDeadline instead.
	QueueTimeout time.Duration
	// MaxWait, when not 0, bounds in time how long a task may expect to
	// wait for a slot (ExecHandler only, where the pool times the
	// tasks): one that arrives when the tasks queued ahead of it would
	// take longer than MaxWait to reach a slot (queued × the median slot
	// hold ÷ the limit) is rejected at once with ReasonFull, where a
	// refusal costs least and its client hears at once. A retry (see
	// Retried) that would wait past half of MaxWait is rejected with
	// ReasonRetry, with a probability rising from 0 there to 1 at
	// MaxWait (see shedRetry). A
	// task that waited 4 × MaxWait all the same (the store slowed down
	// after it was admitted) is rejected with ReasonExpired where it
	// would start. AutoMaxWait derives the bound from what the store
	// serves. Until the pool has timed a window of tasks it has no
	// estimate and bounds nothing.
	MaxWait time.Duration
	// AbandonAfter, when positive, asks a task that waited at least this
	// long, where it would start, whether it has been abandoned (see
	// Abandonable), and rejects it with ReasonAbandoned if so.
	AbandonAfter time.Duration
	// ShardsPerWorker is multiqueue's c: it keeps c*Workers shards; 0 means
	// DefaultShardsPerWorker.
	ShardsPerWorker int
	// CoDelTarget and CoDelInterval tune the adaptive variant; 0 means
	// DefaultCoDelTarget and DefaultCoDelInterval.
	CoDelTarget   time.Duration
	CoDelInterval time.Duration
	// Limit makes the slots of an ExecHandler pool adapt to latency (see
	// package limit); its zero value, or Algorithm "fixed", is a fixed
	// limit of Workers. Only ExecHandler pools other than direct take an
	// adaptive one.
	Limit limit.Config
	// OnWait, if set, is called by a worker with the time each task spent
	// queued, before the task runs or expires. It must be cheap and safe
	// for concurrent use (a Prometheus histogram's Observe is).
	OnWait func(time.Duration)

	// clock, if set, replaces the mono clock and the runtime's timers
	// (tests only).
	clock mono.Clock
	// draw, if set, replaces the uniform draw in [0, 1) shedRetry
	// compares against (tests only).
	draw func() float64
	// limiter, if set, replaces the limit an ExecHandler pool would build
	// (tests only).
	limiter limiter
	// resolvedFor is the variant Resolve completed and checked this
	// Config for: New builds it as it is, with no second look.
	resolvedFor string
	// failsafeInitial is the failsafe variants' first limit: Workers
	// where it was given, else 0 (the library's own). Set by Resolve.
	failsafeInitial int
	// levels, if set, is the failsafe-priority prioritizer's level
	// tracker, and calibrateByHand stops it calibrating on its own
	// (tests only).
	levels          priority.LevelTracker
	calibrateByHand bool
}

// AutoMaxWait as Config.MaxWait bounds the wait by the store's own
// speed: the time the slots take to serve autoWaitRTTs operations, that
// is autoWaitRTTs × the lowest median slot hold of the last 5-10 s
// (limit.Latencies) ÷ the limit, within [autoWaitMin, autoWaitMax]. A
// queue of 20 operations absorbs a burst and refuses a lasting excess
// on arrival; counted in operations rather than in holds, the queue a
// store of many slots keeps waiting is as short, in its own terms, as
// one of one slot: a queue's waits spread over fewer holds the more
// slots serve it. In front of a store that serves an operation in 1 ms
// one at a time that is 20 ms, far under any client's timeout; with 8
// slots, or in front of one that answers in microseconds, it is the
// floor, 10 ms, which a burst or a GC pause does not fill. No store needs
// a number chosen for it.
const AutoMaxWait time.Duration = -1

const (
	autoWaitRTTs = 20
	autoWaitMin  = 10 * time.Millisecond
	autoWaitMax  = time.Second
	// retryWaitShare: a retry may expect to wait MaxWait ÷ this before it
	// may be refused. Half, not less: a client that backs off and gives
	// up after a few attempts loses its answer when every retry meets a
	// refusal, and under such clients the shed retries cost useful
	// goodput that the store had room for.
	retryWaitShare = 2
	// expireWaits: a task that waited this many times MaxWait expires.
	expireWaits = 4
	// yieldWindow: a woken write yields to the reads (yieldIfContended)
	// if one arrived within this long: a read stream of 10 a second or
	// more. A quieter one loses nothing measurable to the writes' turn.
	yieldWindow = 100 * time.Millisecond
)

// The defaults Config's zero values stand for.
const (
	DefaultShardsPerWorker = 2
	DefaultCoDelTarget     = 5 * time.Millisecond
	DefaultCoDelInterval   = 100 * time.Millisecond
)

// withDefaults returns c with every zero (or negative) setting that has a
// default replaced by it, Workers by GOMAXPROCS.
func (c Config) withDefaults() Config {
	if c.Exec == 0 {
		c.Exec = DefaultExec
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.ShardsPerWorker <= 0 {
		c.ShardsPerWorker = DefaultShardsPerWorker
	}
	if c.CoDelTarget <= 0 {
		c.CoDelTarget = DefaultCoDelTarget
	}
	if c.CoDelInterval <= 0 {
		c.CoDelInterval = DefaultCoDelInterval
	}
	return c
}

// Variants lists the names New accepts, in the order documentation shows them.
var Variants = []string{"auto", "direct", "fifo", "lifo", "msqueue", "multiqueue", "adaptive", Failsafe, FailsafePriority}

// HandlerOnly tells whether variant name runs every task on its
// submitter whatever Config.Exec asks (Resolve makes its Exec
// ExecHandler): direct, auto and the failsafe variants, which have no
// workers to hand a task to.
func HandlerOnly(name string) bool {
	switch name {
	case "direct", Auto, Failsafe, FailsafePriority:
		return true
	}
	return false
}

// Auto is the variant that needs no tuning, kvserver's default: reads
// and writes (see Writer) admitted apart, each class fifo's queue in the
// handler (ExecHandler), its slots a Vegas limit (unless Limit says
// otherwise) that finds how many operations the store serves at once,
// and its waits bounded in time, AutoMaxWait unless MaxWait says
// otherwise, retries shed first; writes also paced to what the store
// absorbs (Pacer). See Resolve and classPool.
const Auto = "auto"

// Resolve is the one place a pool's configuration is completed and
// checked: it returns cfg with every default applied (Workers 0 is
// GOMAXPROCS; direct's Exec is ExecHandler, whatever was asked, since it
// runs every task on its submitter), or why variant name cannot run with
// it, without starting or building anything. New builds what it returns
// without resolving it again; a server checks and logs it before it opens
// its store.
func Resolve(name string, cfg Config) (Config, error) {
	workersGiven := cfg.Workers
	cfg = cfg.withDefaults()
	switch {
	case cfg.Exec != ExecHandler && cfg.Exec != ExecWorker:
		return cfg, fmt.Errorf("unknown exec mode %v; want handler or worker", cfg.Exec)
	case name == Failsafe || name == FailsafePriority:
		return resolveFailsafe(name, cfg, workersGiven)
	case adaptiveLimit(cfg) && name == "direct":
		return cfg, fmt.Errorf("direct has no slots to limit: -limit %s needs a queueing pool (-pool fifo, lifo, msqueue, multiqueue or adaptive)", cfg.Limit.Algorithm)
	case adaptiveLimit(cfg) && cfg.Exec == ExecWorker:
		return cfg, fmt.Errorf("-limit %s adapts the slots of -exec handler; -exec worker runs a fixed set of -workers goroutines", cfg.Limit.Algorithm)
	case cfg.Capacity < Unbounded:
		return cfg, fmt.Errorf("pool capacity %d is invalid; want -1 (unbounded), 0 (hand-off) or more", cfg.Capacity)
	case cfg.MaxWait < AutoMaxWait:
		return cfg, fmt.Errorf("-max-wait %v is negative; want a duration, 0 (no bound) or auto", cfg.MaxWait)
	case cfg.MaxWait != 0 && name == "direct":
		return cfg, fmt.Errorf("direct queues nothing: -max-wait needs a queueing pool (-pool auto, fifo, lifo, msqueue, multiqueue or adaptive)")
	case cfg.MaxWait != 0 && cfg.Exec == ExecWorker && name != Auto:
		return cfg, fmt.Errorf("-max-wait bounds the waits of -exec handler, whose slots time their tasks; -exec worker does not")
	case name == "direct":
		cfg.Exec, cfg.resolvedFor = ExecHandler, name
		return cfg, nil
	case !slices.Contains(Variants, name):
		return cfg, fmt.Errorf("unknown pool %q; want one of %v", name, Variants)
	}
	if name == Auto {
		// Like direct, auto runs every task on its submitter, whatever
		// was asked: its slots time their tasks.
		cfg.Exec = ExecHandler
		if cfg.Limit.Algorithm == "" {
			cfg.Limit.Algorithm = "vegas"
		}
		if cfg.MaxWait == 0 {
			cfg.MaxWait = AutoMaxWait
		}
	}
	if err := limitConfig(&cfg).WithDefaults().Validate(); err != nil {
		return cfg, err
	}
	if err := checkQueued(name, cfg); err != nil {
		return cfg, err
	}
	cfg.resolvedFor = name
	return cfg, nil
}

// New builds the named variant from cfg: as it is where Resolve returned
// it for name, else resolved and checked by Resolve first.
func New(name string, cfg Config) (Pool, error) {
	if cfg.resolvedFor != name {
		var err error
		if cfg, err = Resolve(name, cfg); err != nil {
			return nil, err
		}
	}
	if name == "direct" {
		return newDirect(cfg), nil
	}
	if name == Auto {
		return newClassPool(cfg)
	}
	if name == Failsafe || name == FailsafePriority {
		return newFailsafePool(name, cfg), nil
	}
	if cfg.Exec == ExecHandler {
		return newSlotPool(name, cfg, queues[name])
	}
	// Under ExecWorker each variant is its own type over the shared
	// machinery, started in place: its workers hold a pointer to it.
	var p Pool
	var machinery *queuePool
	switch name {
	case "fifo":
		v := &FIFO{}
		p, machinery = v, &v.queuePool
	case "lifo":
		v := &LIFO{}
		p, machinery = v, &v.queuePool
	case "msqueue":
		v := &MSQueue{}
		p, machinery = v, &v.queuePool
	case "multiqueue":
		v := &MultiQueue{}
		p, machinery = v, &v.queuePool
	default:
		v := &Adaptive{}
		p, machinery = v, &v.queuePool
	}
	machinery.start(name, cfg, queues[name])
	return p, nil
}

// queues builds each queueing variant's queue: the same one in both exec
// modes, so that two runs that differ in -exec differ in nothing else.
var queues = map[string]func(Config) queue{
	Auto:         newFIFOQueue,
	"fifo":       newFIFOQueue,
	"lifo":       newLIFOQueue,
	"msqueue":    newMSQueue,
	"multiqueue": newMultiQueue,
	"adaptive":   newAdaptiveQueue,
}

// adaptiveLimit tells whether cfg asks for a limit other than a fixed one.
func adaptiveLimit(cfg Config) bool {
	return cfg.Limit.Algorithm != "" && cfg.Limit.Algorithm != "fixed"
}
