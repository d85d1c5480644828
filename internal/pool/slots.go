package pool

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvpool/kvpool/internal/limit"
)

// slotPool is the handler exec mode (ExecHandler) of every queueing
// variant: there are no worker goroutines. A task runs on the goroutine
// that submitted it, once that goroutine holds one of the pool's slots;
// the number of slots is the limit (Workers, fixed, or an adaptive limit).
// A submitter that finds every slot taken queues a waiter in the variant's
// queue (FIFO, LIFO, Michael–Scott, multiqueue, adaptive) and sleeps on it;
// a goroutine done with its slot hands it straight to the next waiter in
// that order, or gives it back. That is the shape of Netflix
// concurrency-limits' BlockingLimiter and LifoBlockingLimiter: no hand-off
// of the work to another goroutine and back, only of the slot, and only
// when somebody waits.
//
// So Submit blocks until its task has run or been rejected: Task.Run and
// Task.Reject are both called on the submitting goroutine, before Submit
// returns. A caller can lend the task buffers it owns only for the call
// (the HTTP handler lends its request's key and body).
//
// What must hold:
//   - inflight counts the slots held: taken by acquire (a compare-and-swap
//     below the limit, never add-then-check), handed from holder to waiter
//     unchanged, and given back by exactly one decrement.
//   - No waiter is stranded: a holder done with its slot pops the queue
//     before giving the slot back, and after giving it back looks again
//     (empty); a pusher, after its push, tries to acquire a slot and, if it
//     gets one, passes it on. Both the push and the decrement are
//     sequentially consistent atomics read by the other side afterwards
//     (queue's visibility rule), so of "push; acquire" and "give back;
//     empty?" one sees the other: either the pusher finds the slot free or
//     the holder finds the item. A failed acquire means every slot is held,
//     and each holder will pop when it is done.
//   - Every waiter is answered exactly once: admitted (it then holds a
//     slot) or rejected, by whoever popped or evicted it.
//   - Close shuts the gate, then rejects what is queued; a waiter queued
//     after that by a submitter already inside the gate is rejected by the
//     next pop, which every push is followed by (see above), because every
//     pop checks the gate.
type slotPool struct {
	counters
	cfg      Config
	name     string
	q        queue
	lim      limiter
	adaptive bool // lim samples latency: Run is timed
	// lat tells how long tasks hold their slots (nil: lim does not
	// time them); with cfg.MaxWait it bounds the queue in time.
	lat      limit.Latencies
	inflight paddedInt64
	room     signal // OverflowBlock's submitters wait here for room or a slot
	waiters  sync.Pool
	// pace, if set, holds writes to a byte rate before they queue for a
	// slot (auto's write class; see pacer).
	pace *pacer
	// yieldTo, if set, is the pool whose tasks a task of this one yields
	// the CPU to once before it runs, when woken (handed its slot by
	// another goroutine, or by its pacing's timer) while tasks arrive
	// there: auto's write class yields to its read class (see
	// yieldToRunnable and yieldIfContended). seen is how many had entered
	// yieldTo when a woken task last looked, and when that count last
	// changed (the pool's clock).
	yieldTo *slotPool
	seen    struct{ entered, at atomic.Int64 }
}

// yieldIfContended yields the CPU once (yieldToRunnable) if p yields to
// another pool and that one took a task within yieldWindow. The tasks
// the yield is for are those waiting for a CPU before they reach the
// pool, which the pool cannot count; tasks arriving there are the sign
// that some are. With none arriving there is nobody to yield to: the
// yield would only keep p's slot idle while its goroutine waits for the
// CPU again, and p's queued tasks would wait longer for the slot (through
// a store's flush, long enough to expire). Two writes woken at once may
// race on seen; the worst is one yield too few or too many, never a
// wrong answer.
func (p *slotPool) yieldIfContended() {
	o := p.yieldTo
	if o == nil {
		return
	}
	now := p.cfg.now()
	if n := o.gate.entered.Load(); p.seen.entered.Swap(n) != n {
		p.seen.at.Store(now)
	}
	if at := p.seen.at.Load(); at != 0 && now-at < int64(yieldWindow) {
		yieldToRunnable()
	}
}

// newSlotPool is the handler-mode pool of variant name over the queue
// newQueue builds, from cfg as Resolve completed and checked it.
func newSlotPool(name string, cfg Config, newQueue func(Config) queue) (*slotPool, error) {
	p := &slotPool{cfg: cfg, name: name, q: newQueue(cfg)}
	lim, err := newLimiter(&p.cfg) // on p.cfg's clock
	if err != nil {
		return nil, err
	}
	p.lim = lim
	p.adaptive = !isFixed(lim)
	p.lat, _ = lim.(limit.Latencies)
	p.gate = newGate()
	p.room = newSignal()
	p.waiters.New = func() any { return &waiter{ch: make(chan Reason, 1)} }
	return p, nil
}

// admitted is what a waiter's channel carries when it is handed a slot;
// any other value is the Reason it was rejected for.
const admitted Reason = 255

// waiter stands in the queue for a submitter sleeping on ch. As a Task it
// is answered by whoever pops or evicts it: Run hands it a slot, Reject
// the reason it will not get one. The submitter then runs or rejects its
// own task on its own goroutine. It carries its task's deadline, and the
// task itself for Abandoned, which whoever pops it may ask.
type waiter struct {
	ch       chan Reason // one slot: the single answer
	task     Task
	deadline int64
}

func (w *waiter) Run()            { w.ch <- admitted }
func (w *waiter) Reject(r Reason) { w.ch <- r }
func (w *waiter) Deadline() int64 { return w.deadline }

// Abandoned implements Abandonable for w's task, if it does.
func (w *waiter) Abandoned() bool {
	a, ok := w.task.(Abandonable)
	return ok && a.Abandoned()
}

// getWaiter returns a waiter for t, queued at enqueued; putWaiter gives
// it back once answered.
func (p *slotPool) getWaiter(t Task, enqueued int64) (*waiter, item) {
	w := p.waiters.Get().(*waiter)
	w.task, w.deadline = t, t.Deadline()
	return w, item{task: w, enqueued: enqueued}
}

func (p *slotPool) putWaiter(w *waiter) {
	w.task = nil
	p.waiters.Put(w)
}

// Submit implements Pool: it returns once t has run or been rejected, on
// this goroutine.
func (p *slotPool) Submit(t Task) {
	if !p.gate.enter() {
		p.reject(t, ReasonClosed)
		return
	}
	if p.pace != nil {
		r, refuse, slept := p.pace.admit(t, &p.cfg, p.paceBound(), p.gate.done)
		if refuse {
			p.reject(t, r)
			p.gate.leave()
			return
		}
		if slept {
			p.yieldIfContended()
		}
	}
	if p.q.empty() {
		if inflight, ok := p.acquire(); ok {
			// A free slot and nobody waiting: no queue, no clock (but
			// for a deadline), no other goroutine.
			if p.cfg.OnWait != nil {
				p.cfg.OnWait(0)
			}
			if p.cfg.overdue(t.Deadline()) {
				p.reject(t, ReasonDeadline)
				p.pass()
			} else {
				p.runHolding(t, inflight)
			}
			p.gate.leave()
			return
		}
	}
	if r, refuse := p.overBound(t); refuse {
		p.reject(t, r)
		p.gate.leave()
		return
	}
	w, it := p.getWaiter(t, p.cfg.now())
	switch {
	case p.q.push(it):
		p.pushed()
	case p.cfg.Overflow == OverflowCallerRuns:
		// Over the limit, on the caller: there is no other place to run it.
		p.putWaiter(w)
		p.start(t, &p.cfg)
		p.gate.leave()
		return
	case p.cfg.Overflow == OverflowBlock:
		if !p.block(t, it) {
			p.putWaiter(w)
			p.gate.leave()
			return
		}
	case p.cfg.Overflow == OverflowDropOldest:
		p.spill(&p.cfg, p.q, it)
		p.pushed()
	default:
		p.putWaiter(w)
		p.reject(t, ReasonFull)
		p.gate.leave()
		return
	}
	// Whoever popped w judged it (QueueTimeout, deadline, abandoned)
	// before handing it the slot.
	if r := <-w.ch; r == admitted {
		p.yieldIfContended()
		p.putWaiter(w)
		p.runHolding(t, int(p.inflight.Load()))
	} else {
		p.putWaiter(w)
		t.Reject(r) // counted by whoever rejected the waiter
	}
	p.gate.leave()
}

// pushed follows every push: if a slot is free (every holder may have
// looked at the queue before the push), take it and pass it on, to the
// oldest or newest waiter as the queue orders them, maybe the pusher.
func (p *slotPool) pushed() {
	if _, ok := p.acquire(); ok {
		p.pass()
	}
}

// block waits for room in the queue or a free slot, at most QueueTimeout
// or until t's deadline (OverflowBlock). It reports whether it queued it;
// otherwise t has run here (a slot came free) or was rejected. Workers'
// pops and slots given back poke room; it looks once more after
// announcing itself, so a poke between its failed push and its
// announcement is not lost, and one that finds room pokes again on its
// way, as queuePool.block does.
func (p *slotPool) block(t Task, it item) (queued bool) {
	timeout, stopTimer, why := p.cfg.giveUpTimer(t)
	defer stopTimer()
	p.room.waiters.Add(1)
	defer p.room.waiters.Add(-1)
	for {
		if p.q.empty() {
			if inflight, ok := p.acquire(); ok {
				// It waited for room: judged as a waiter popped would be.
				p.room.poke()
				at := p.cfg.now()
				wait := time.Duration(max(at-it.enqueued, 0))
				if p.cfg.OnWait != nil {
					p.cfg.OnWait(wait)
				}
				if r, drop := p.cfg.stale(it, wait, at); drop {
					p.reject(t, r)
					p.pass()
					return false
				}
				p.runHolding(t, inflight)
				return false
			}
		}
		if p.q.push(it) {
			p.room.poke()
			p.pushed()
			return true
		}
		select {
		case <-p.room.ch:
		case <-timeout:
			p.reject(t, why)
			return false
		case <-p.gate.done:
			p.reject(t, ReasonClosed)
			return false
		}
	}
}

// overBound tells whether t, about to queue, would expect to wait past the
// bound Config.MaxWait sets (a retry: see shedRetry), and the reason to
// reject it with. With no bound, or before a window of tasks has been
// timed, nothing is over it.
func (p *slotPool) overBound(t Task) (Reason, bool) {
	bound, median, ok := p.waitBound()
	if !ok {
		return 0, false
	}
	wait := p.expectedWait(median, p.q.len()+1)
	switch {
	case wait <= bound/retryWaitShare:
		return 0, false
	case isRetry(t) && p.cfg.shedRetry(wait, bound):
		return ReasonRetry, true
	case wait > bound:
		return ReasonFull, true
	}
	return 0, false
}

// waitBound is the longest a task may expect to wait (Config.MaxWait, or
// the one AutoMaxWait derives from the lowest slot hold measured, for a
// paced pool's writes at least a quarter of paceBound) and the
// median slot hold now; ok is false where there is no bound, or no window
// of tasks has been timed yet to estimate a wait by.
func (p *slotPool) waitBound() (bound, median time.Duration, ok bool) {
	if p.cfg.MaxWait == 0 || p.lat == nil {
		return 0, 0, false
	}
	median, lowest := p.lat.RTT()
	if median == 0 {
		return 0, 0, false
	}
	if p.cfg.MaxWait > 0 {
		return p.cfg.MaxWait, median, true
	}
	serve := autoWaitRTTs * lowest / time.Duration(max(p.lim.Current(), 1))
	bound = min(max(serve, autoWaitMin), autoWaitMax)
	if p.pace != nil {
		// Writes, for paceBound's reasons, and because a write refused
		// comes back with its body: a quarter of the pace bound for a
		// slot, the whole of it before one expires (expireWaits × bound).
		bound = max(bound, p.paceBound()/expireWaits)
	}
	return bound, median, true
}

// expectedWait is how long the ahead-th task in the queue waits for a
// slot when each slot is held for median: the slots serve limit ÷ median
// tasks a second.
func (p *slotPool) expectedWait(median time.Duration, ahead int) time.Duration {
	return time.Duration(int64(ahead) * int64(median) / int64(max(p.lim.Current(), 1)))
}

// Drain implements Drainer: the expected wait of the last task queued,
// and for a write of a paced pool the time until the writes admitted
// before it are absorbed at the rate, whichever is longer.
func (p *slotPool) Drain(t Task) time.Duration {
	var queued, paced time.Duration
	if p.lat != nil {
		median, _ := p.lat.RTT()
		queued = p.expectedWait(median, p.q.len())
	}
	if p.pace != nil {
		paced = p.pace.backlog(p.cfg.now())
	}
	return max(queued, paced)
}

// paceBound is the longest a write may expect to wait for its bytes
// under pacing: MaxWait where it was given, else autoWaitMax. Not the
// bound AutoMaxWait derives from the slots' hold times: those time the
// store's work on a request, not the flushes and compactions behind it,
// which drain in seconds; a write flood's clients then wait up to a
// second for the store rather than being refused at once and sending
// again.
func (p *slotPool) paceBound() time.Duration {
	if p.cfg.MaxWait > 0 {
		return p.cfg.MaxWait
	}
	return autoWaitMax
}

// acquire takes a slot if fewer than the limit are held, and returns how
// many are held with it.
func (p *slotPool) acquire() (int, bool) {
	limit := int64(p.lim.Current())
	for {
		n := p.inflight.Load()
		if n >= limit {
			return 0, false
		}
		if p.inflight.CompareAndSwap(n, n+1) {
			return int(n + 1), true
		}
	}
}

// runHolding runs t, which holds a slot taken when inflight slots were
// held, then passes the slot on.
func (p *slotPool) runHolding(t Task, inflight int) {
	if !p.adaptive {
		p.run(t)
		p.pass()
		return
	}
	start := p.cfg.now()
	p.run(t)
	p.lim.Sample(start, time.Duration(p.cfg.now()-start), inflight, false)
	p.pass()
	// The sample may have raised the limit: slots it added go to waiters
	// now, not at the next push.
	for !p.q.empty() {
		if _, ok := p.acquire(); !ok {
			return
		}
		p.pass()
	}
}

// pass is called by a slot's holder that no longer needs it: the slot goes
// to the next waiter the queue gives up, unless more slots are held than
// the limit allows now (it shrank), or goes back.
func (p *slotPool) pass() {
	for {
		if p.inflight.Load() <= int64(p.lim.Current()) && p.handOver() {
			return
		}
		p.inflight.Add(-1)
		if p.cfg.Overflow == OverflowBlock {
			p.room.poke()
		}
		// A pusher that found every slot held before the decrement
		// counts on this look (see slotPool).
		if p.q.empty() {
			return
		}
		if _, ok := p.acquire(); !ok {
			return // every slot is held again: their holders will look
		}
	}
}

// handOver pops waiters until one gets the caller's slot, and reports
// whether one did. A waiter the queue sheds (adaptive's CoDel, lifo's
// expired bottom), one that must not start (past QueueTimeout or its
// deadline, or abandoned: see Config.stale), and every waiter once the
// pool is closed are rejected on the way, unrun.
func (p *slotPool) handOver() bool {
	for {
		got := p.q.pop()
		if got.v == none {
			return false
		}
		if p.cfg.Overflow == OverflowBlock {
			p.room.poke()
		}
		at := got.at
		if at == 0 {
			at = p.cfg.now()
		}
		wait := p.waited(got.it, &p.cfg, at)
		if p.gate.isClosed() {
			p.reject(got.it.task, ReasonClosed)
			continue
		}
		if got.v == shed {
			p.reject(got.it.task, got.why)
			continue
		}
		if r, drop := p.cfg.stale(got.it, wait, at); drop {
			p.reject(got.it.task, r)
			continue
		}
		if bound, _, ok := p.waitBound(); ok && wait > expireWaits*bound {
			p.reject(got.it.task, ReasonExpired)
			continue
		}
		got.it.task.Run() // the waiter: it holds the slot now
		return true
	}
}

// Close implements Pool: queued tasks are rejected with ReasonClosed, and
// Close returns once every task running has finished.
func (p *slotPool) Close() {
	if p.gate.shut() {
		for {
			got := p.q.pop()
			if got.v == none {
				break
			}
			p.reject(got.it.task, ReasonClosed)
		}
	}
	p.gate.wait()
}

// Stats implements Pool. Workers is the limit now.
func (p *slotPool) Stats() Stats {
	s := p.stats(p.q.len(), &p.cfg)
	s.Workers = p.lim.Current()
	s.LimitChanges = p.lim.Changes()
	return s
}

// Name implements Pool.
func (p *slotPool) Name() string { return p.name }

// RunsOnSubmitter implements Pool: always.
func (p *slotPool) RunsOnSubmitter() bool { return true }
