package pool

import "sync"

// queuePool is ExecWorker's machinery, which every queueing variant shares:
// a fixed set of workers serving a queue, the overflow policies, parking
// and Close. The variants differ only in the queue they plug in. Submit
// enters the gate, hands the task to an idle worker or queues it or
// overflows, and leaves; a worker rejects with ReasonClosed what it takes
// off the queue after Close.
//
// What must hold:
//   - Every admitted item is pushed or overflows; every pushed
//     item is popped exactly once, by a worker or by a drop-oldest
//     eviction; every item is answered exactly once.
//   - No item waits while a worker sleeps: workers park on idle only after
//     a pop that found nothing, and every push is followed by idle.wake
//     (see idlers).
//   - One producer's tasks run in the order it submitted them, where the
//     variant promises an order (ordered: see inOrder).
//   - The sleepers' channels are closed (by Close) only once the gate is
//     shut and no submitter is inside it, so after that nothing is pushed
//     or handed over, and a worker that then finds the queue empty may
//     exit: nothing can be stranded.
type queuePool struct {
	counters
	// Read-mostly from here on (idle's hot bitmap words are padded, elsewhere).
	cfg      Config
	name     string
	q        queue
	blocking bool // cfg.Overflow == OverflowBlock
	ordered  bool // inOrder[name]: hand off only into an empty queue
	idle     idlers
	room     signal
	wg       sync.WaitGroup

	// afterAnnounce, if set (by tests, before run), runs in park between
	// the announcement and the re-check: where a claim can race the re-check.
	afterAnnounce func()
}

// start initialises p around the queue newQueue builds from cfg, which
// Resolve has completed and checked, and starts cfg.Workers workers. p
// must not be copied afterwards.
func (p *queuePool) start(name string, cfg Config, newQueue func(Config) queue) {
	p.init(name, cfg, newQueue)
	p.run()
}

// init is start without starting the workers, so that a test can set
// afterAnnounce before any worker reads it.
func (p *queuePool) init(name string, cfg Config, newQueue func(Config) queue) {
	p.cfg, p.name, p.q = cfg, name, newQueue(cfg)
	p.gate = newGate()
	p.idle = newIdlers(cfg.Workers)
	p.room = newSignal()
	p.blocking = cfg.Overflow == OverflowBlock
	p.ordered = inOrder[name]
	for range cfg.Workers {
		p.idle.add()
	}
}

// run starts the workers.
func (p *queuePool) run() {
	p.wg.Add(len(p.idle.all))
	for _, s := range p.idle.all {
		go p.work(s)
	}
}

// inOrder names the variants that run one producer's tasks in the order it
// submitted them: fifo and msqueue, and adaptive, which is FIFO whenever a
// worker is idle (its queue does not stand then). lifo serves the newest
// first and multiqueue is relaxed FIFO by design, so neither needs the
// check below, which for multiqueue would scan every shard.
//
// Why a check: a worker announces itself idle and then re-checks the
// queue. A submitter may claim it in between and hand it task A; the
// worker's re-check may then find a task B that the same producer pushed
// after A (no worker was idle for B: the claim took the only one). Unless
// hand-offs go only into an empty queue, B could also be a task pushed
// before A, so the worker could not tell which of the two to run first.
// With the check, whatever the re-check finds beside a handed task is
// never older than it, and park runs the handed one first.
var inOrder = map[string]bool{"fifo": true, "msqueue": true, "adaptive": true}

// mayHandOff reports whether a task may go straight to an idle worker
// rather than into the queue: always, unless the variant is ordered and
// tasks are queued, which must run first.
func (p *queuePool) mayHandOff() bool { return !p.ordered || p.q.empty() }

// Submit implements Pool. A task that finds a worker idle is handed to it
// directly where mayHandOff: the worker re-checked the queue before
// sleeping, so it is empty then but for a race, which mayHandOff closes
// for the ordered variants. It never queues, so its wait is 0
// (OnWait(0); QueueTimeout cannot apply), and neither side reads the clock
// (see docs/pools.md for what that saves) unless the task has a deadline,
// which the worker checks before it runs the task.
func (p *queuePool) Submit(t Task) {
	it, ok := p.admit(t)
	if !ok {
		return
	}
	if p.mayHandOff() && p.idle.handOff(it) {
		p.gate.leave()
		return
	}
	it.enqueued = p.cfg.now()
	switch {
	case p.q.push(it):
		p.idle.wake()
	case p.cfg.Overflow == OverflowBlock:
		p.block(it)
	case p.spill(&p.cfg, p.q, it):
		p.idle.wake()
	}
	p.gate.leave()
}

// block waits for room for it, or an idle worker to take it, at most
// QueueTimeout or until its deadline, on the room signal. Workers poke room
// after every pop and, under OverflowBlock, when they go idle (fifo's -cap
// 0 has no queue to find room in: only an idle worker will do); room has
// one slot, so a submitter that gets room pokes again on its way out, and
// the next waiter wakes to try.
func (p *queuePool) block(it item) {
	timeout, stopTimer, why := p.cfg.giveUpTimer(it.task)
	defer stopTimer()
	p.room.waiters.Add(1)
	for {
		handed := p.mayHandOff() && p.idle.handOff(it)
		if handed || p.q.push(it) {
			p.room.waiters.Add(-1)
			if !handed {
				p.idle.wake()
			}
			p.room.poke()
			return
		}
		select {
		case <-p.room.ch:
		case <-timeout:
			p.room.waiters.Add(-1)
			p.reject(it.task, why)
			return
		case <-p.gate.done:
			p.room.waiters.Add(-1)
			p.reject(it.task, ReasonClosed)
			return
		}
	}
}

func (p *queuePool) work(me *sleeper) {
	defer p.wg.Done()
	var next popped // a second task in hand, from a claim that raced a re-check
	for {
		got := next
		if next = (popped{}); got.v == none {
			got = p.q.pop()
		}
		if got.v == none {
			if got, next = p.park(me); got.v == none {
				return
			}
		}
		if p.blocking {
			p.room.poke()
		}
		switch {
		case p.gate.isClosed():
			p.reject(got.it.task, ReasonClosed)
		case got.v == handed:
			p.handedOver(got.it, &p.cfg)
		case got.v == shed: // adaptive and lifo shed, having read the clock
			p.shed(got.it, &p.cfg, got.at, got.why)
		default:
			if got.at == 0 {
				got.at = p.cfg.now()
			}
			p.dequeuedAt(got.it, &p.cfg, got.at)
		}
	}
}

// park sleeps until there is a task, handed over on me.ch or queued, and
// returns it. It returns none only once Close has closed me.ch and the
// queue is empty: the worker should exit. When a submitter claimed me while
// my re-check was finding a task in the queue, park takes the submitter's
// message at once and returns both tasks, in the variant's order: a task
// handed over first where the variant is ordered (the one queued beside it
// is newer, see inOrder), else the queued one; a "look at the queue"
// message's task, queued after the one the re-check found, second.
func (p *queuePool) park(me *sleeper) (first, second popped) {
	for {
		p.idle.announce(me)
		if p.afterAnnounce != nil {
			p.afterAnnounce()
		}
		if p.blocking {
			p.room.poke() // a blocked submitter may hand its task to me
		}
		if got := p.q.pop(); got.v != none {
			if p.idle.withdraw(me) {
				return got, popped{}
			}
			second, _ = p.message(me)
			if second.v == handed && p.ordered {
				return second, got
			}
			return got, second
		}
		got, open := p.message(me)
		if !open {
			return p.q.pop(), popped{}
		}
		if got.v != none {
			return got, popped{}
		}
	}
}

// message waits for the message a claim owes me and turns it into a task
// to run: the task handed over, or, for "look at the queue", the queue's
// next (none if another worker took it first). open is false once Close
// has closed me.ch.
func (p *queuePool) message(me *sleeper) (got popped, open bool) {
	m, open := <-me.ch
	switch {
	case !open:
		return popped{}, false
	case m.task != nil:
		return popped{it: m, v: handed}, true
	}
	return p.q.pop(), true
}

// Close implements Pool: queued tasks are rejected with ReasonClosed.
//
// Workers sleep on a receive from their own channel alone (a select with a
// second, stop channel costs every wake-up both channels' locks), so Close
// wakes them by closing those channels. That is safe because only
// submitters send on them and gate.close returns once none is left inside
// the gate: no send can follow the close. A message already sent is still
// received first; the task it carries, like every queued one, is then
// rejected ReasonClosed by the worker's gate check.
func (p *queuePool) Close() {
	if p.gate.close() {
		for _, s := range p.idle.all {
			close(s.ch)
		}
	}
	p.wg.Wait()
}

// Stats implements Pool.
func (p *queuePool) Stats() Stats { return p.stats(p.q.len(), &p.cfg) }

// Name implements Pool.
func (p *queuePool) Name() string { return p.name }

// RunsOnSubmitter implements Pool: a worker runs each task.
func (p *queuePool) RunsOnSubmitter() bool { return false }
