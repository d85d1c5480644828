//go:build linux

package engine

import (
	"context"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/kvpool/kvpool/internal/loadgen/client"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/schedule"
)

// evloop runs one loop's share of an open-model run (see loopGroup) over
// raw connections from one goroutine, as wrk does per thread: one epoll
// set holds every connection of the loop, and each wait returns whatever
// responses have arrived or ends at the pacer's next wake-up, with
// nanosecond precision (epoll_pwait2). Whatever the wake-up, the loop
// reads and records the responses that arrived and writes the requests
// that fell due onto idle connections (oldest idle first). A request
// costs one write, one read and a share of one wait; nothing is handed
// between goroutines or goes through the Go netpoller.
//
// A response's end time is the kernel's receive time of its last bytes
// (SO_TIMESTAMPNS), not when the loop read it. So the loop may leave
// responses unread until its next wake-up (see deferReads): below
// saturation it then wakes once per quantum instead of once per response
// as well, and on a VM a wake-up costs more than the request's system
// calls.
//
// A reconnect (the server closed a connection, or a client gave up on an
// answer and closed it) is a non-blocking connect the loop makes itself
// (see startConnect), so that a storm of reconnects costs a few system
// calls each on the loop's thread and wakes no other. Growth (a
// connection more, up to MaxConns) dials in a goroutine that hands the
// socket back through a channel and wakes the loop with an eventfd; no
// dial delays a send.
//
// Every field is the loop goroutine's, except dials (a channel) and what
// fastEngine guards itself (conns under mu, its atomic counters).
type evloop struct {
	e      *fastEngine
	p      schedule.Pacer
	epfd   int
	wakeFd int // eventfd: a dial finished
	// sleepFd is an epoll set holding only wakeFd: a wait on it is a
	// sleep that leaves the connections' responses for later.
	sleepFd int
	pwait2  bool
	events  []unix.EpollEvent

	dials   chan dialResult
	dialing int            // dials under way: goroutines and the loop's own connects
	dialWG  sync.WaitGroup // the same, until their last write to wakeFd
	stopped bool
	idle    idleList
	// connShortAt is the last time (ns) the loop had attempts due and no
	// connection idle: an attempt due at or before it waited for a
	// connection (record.FlagConnWait); one due after it did not, and its
	// lag is the loader's own.
	connShortAt int64
	checked     int64 // when the watchdog last looked (ns)
	yielded     int64 // when the loop last let other goroutines run (ns)
	soleP       bool  // GOMAXPROCS is 1
	stamping    bool  // the last response read came with its receive time (see deferReads)
	deferred    int   // sleeps that left responses unread
	// autoQuantum: Config.Quantum is 0, and the loop sizes p.Quantum to
	// loopRate (req/s) and the answers' median (schedule.QuantumFor).
	autoQuantum bool
	loopRate    float64
	answers     schedule.MedianTracker

	// With a client model (Config.Client; client is nil without one):
	// client decides per attempt whether it is sent and whether and when
	// a failed one is retried; retries wait in retries for their time.
	client         *client.Client
	retrying       bool
	clientWaits    bool // the client's own timeout runs from each attempt's intended send
	retries        retryQueue
	attemptTimeout time.Duration    // the client's own timeout, else Config.Timeout
	timeoutErr     error            // what giving up on an attempt records
	unsent         *record.Recorder // attempts never sent (throttled, or retries the run's end caught)

	// sa is the address the loop's first connection reached (learnTarget),
	// for its own connects; nil until then, and every dial goes through
	// net.Dial. family is its address family, addr the same as a net.Addr.
	sa     unix.Sockaddr
	family int
	addr   net.Addr
}

// requantumEvery is how many answers pass between two sizings of an
// automatic quantum: the median moves slowly, and sizing it costs a
// division.
const requantumEvery = 256

type dialResult struct {
	c   *conn
	fd  int
	err error
	// watched: fd is in the loop's epoll set already (the loop's own
	// connect), watched for writability.
	watched bool
}

// epoll user data of the eventfd; connections use their slot.
const wakeSlot = -1

func newEventLoop(e *fastEngine) (*evloop, error) {
	var err error
	l := &evloop{e: e, epfd: -1, wakeFd: -1, sleepFd: -1, pwait2: true, connShortAt: -1 << 62,
		events:         make([]unix.EpollEvent, 256),
		dials:          make(chan dialResult, e.maxConns+1),
		p:              schedule.Pacer{Sched: e.sched, Planned: e.planned, Quantum: e.quantum()},
		soleP:          runtime.GOMAXPROCS(0) == 1,
		autoQuantum:    e.cfg.Quantum == 0,
		loopRate:       e.rate(),
		attemptTimeout: e.cfg.AttemptTimeout(), timeoutErr: record.ErrTimeout}
	if m := e.cfg.Client; !m.IsZero() {
		l.client = client.New(m, e.cfg.Seed*1_000_003+e.part.First+1)
		l.retrying = m.Retrying()
		l.unsent = e.col.NewRecorder()
		if m.Timeout > 0 {
			l.timeoutErr, l.clientWaits = record.ErrClientTimeout, true
		}
	}
	fail := func(call string, err error) (*evloop, error) {
		l.close()
		return nil, os.NewSyscallError(call, err)
	}
	if l.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return fail("epoll_create1", err)
	}
	if l.wakeFd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		return fail("eventfd", err)
	}
	if l.sleepFd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return fail("epoll_create1", err)
	}
	for _, epfd := range []int{l.epfd, l.sleepFd} {
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: wakeSlot}
		if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, l.wakeFd, &ev); err != nil {
			return fail("epoll_ctl", err)
		}
	}
	return l, nil
}

// connect dials c before the start and adds it to the loop.
func (l *evloop) connect(c *conn) error {
	fd, err := dialRaw(l.e.t.Host, l.e.cfg.Timeout)
	if err != nil {
		return err
	}
	return l.attach(c, fd, false)
}

// attach makes fd c's connection and watches it for responses (watched:
// the epoll set holds fd already); a new conn gets a slot. It closes fd
// if it fails.
func (l *evloop) attach(c *conn, fd int, watched bool) error {
	e := l.e
	if l.sa == nil {
		l.learnTarget(fd)
	}
	if c.ev.slot < 0 {
		e.mu.Lock()
		c.ev.slot = len(e.conns)
		e.conns = append(e.conns, c)
		e.mu.Unlock()
	}
	op := unix.EPOLL_CTL_ADD
	if watched {
		op = unix.EPOLL_CTL_MOD
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(c.ev.slot)}
	if err := unix.EpollCtl(l.epfd, op, fd, &ev); err != nil {
		unix.Close(fd)
		return os.NewSyscallError("epoll_ctl", err)
	}
	// A response that comes without its receive time (this failed, or
	// the kernel has not started stamping: it does so only while some
	// socket asks, and starts from a work queue a moment after the first
	// one does) ends when the loop reads it; see deferReads.
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	c.ev.fd, c.dead, c.served = fd, false, 0
	if c.ev.rbuf == nil {
		c.ev.rbuf = make([]byte, 4096)
	}
	c.ev.rn = 0
	return nil
}

// rewatch switches whether the loop waits for c's socket to take more of
// a request.
func (l *evloop) rewatch(c *conn, writable bool) {
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(c.ev.slot)}
	if writable {
		ev.Events |= unix.EPOLLOUT
	}
	_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, c.ev.fd, &ev)
}

// run sends the schedule until every request is sent, ctx is cancelled
// or requests are still unsent Timeout after the schedule ended; then it
// waits for the requests in flight (the watchdog bounds them) and dials.
func (l *evloop) run(ctx context.Context) {
	e := l.e
	defer l.preciseTimers()()
	for _, c := range e.conns {
		l.idle.push(c)
	}
	drainBy := int64(e.cfg.Duration + e.cfg.Timeout)
	lastTimer := int64(-1) << 62
	for {
		now := e.now()
		next := e.next.Load()
		if !l.stopped && (next >= e.planned && l.settled() || ctx.Err() != nil || now > drainBy) {
			l.stopped = true
			l.abandonRetries(now)
		}
		if l.stopped && e.inFlight.Load() == 0 && l.dialing == 0 {
			return
		}
		wait, wakeAt := schedule.PacerMaxSleep, int64(0)
		if !l.stopped {
			wakeAt = l.nextWake(lastTimer, next, now)
			if now >= wakeAt {
				l.dispatch(now)
				lastTimer = l.p.Anchor(wakeAt, now)
				wakeAt = l.nextWake(lastTimer, e.next.Load(), now)
			}
			wait = min(wait, time.Duration(wakeAt-now))
		}
		if time.Duration(now-l.checked) >= watchdogEvery(l.attemptTimeout) {
			l.watchdog(now)
			l.checked = now
		}
		if l.soleP && time.Duration(now-l.yielded) >= rawWaitMax {
			// Let the process's other goroutines have the only P. (With
			// more Ps they run on the others, and a yield would wake one.)
			runtime.Gosched()
			l.yielded = now
		}
		if !l.stopped && l.deferReads(wait, now) {
			// Read what has arrived (after this wake-up's sends, which
			// thus go out first), then sleep through the responses that
			// arrive meanwhile.
			l.collect(now)
			l.handle(l.wait(l.sleepFd, time.Duration(wakeAt-e.now())))
			l.deferred++
			continue
		}
		if l.handle(l.wait(l.epfd, wait)) == 0 {
			continue
		}
		// The goroutine that woke sends what fell due meanwhile.
		if now := e.now(); !l.stopped && (e.sched.At(e.next.Load()) <= now || l.retryDue(now)) {
			l.dispatch(now)
		}
	}
}

// preciseTimers takes the kernel's timer slack (by default up to 50 µs
// added to every timed wait, to merge wake-ups) off the loop's thread,
// and returns the undo. With more than one P it locks the loop to the
// thread (it never yields, so that costs nothing); with one it does not,
// as each yield of a locked goroutine would hand the P to another
// thread: the goroutine mostly stays on its thread anyway, and where it
// moves, its waits are up to the slack late again.
func (l *evloop) preciseTimers() func() {
	if !l.soleP {
		runtime.LockOSThread()
	}
	unlock := func() {
		if !l.soleP {
			runtime.UnlockOSThread()
		}
	}
	slack, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil || unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0) != nil {
		return unlock
	}
	return func() {
		_ = unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(slack), 0, 0, 0)
		unlock()
	}
}

// deferReads says whether the loop may sleep until its next wake-up, at
// now+wait, without reading the responses that arrive meanwhile: the wait
// is short (not a gap between sparse requests), the last response read
// came with its receive time (so the next ones end when they arrived, not
// when read), and more connections are idle than requests fall due by one
// quantum after the wake-up, so that no request waits for a connection
// whose response sits unread.
func (l *evloop) deferReads(wait time.Duration, now int64) bool {
	if wait <= 0 || wait > rawWaitMax || !l.stamping || l.retries.len() > 0 {
		return false
	}
	e := l.e
	next := e.next.Load()
	due := min(e.sched.DueBy(now+int64(wait)+int64(l.p.Quantum)), e.planned)
	return due <= next || uint64(l.idle.n) > due-next
}

// collect reads the responses of the requests sent before before (ns),
// and writes on what the socket could not take before, by trying each:
// cheaper than asking epoll, which costs a system call even when it has
// nothing to say, whereas below saturation nearly every request sent
// before this wake-up has its response waiting. (An idle connection the
// server closed is left for its next request to find, see broken.)
func (l *evloop) collect(before int64) {
	now := l.e.now()
	for _, c := range l.e.conns {
		switch {
		case c.ev.fd < 0 || !c.ev.busy || c.ev.waiting:
		case c.ev.unwritten != nil:
			l.onEvent(c, unix.EPOLLOUT, now)
		case c.o.Sent < before:
			l.onEvent(c, unix.EPOLLIN, now)
		}
	}
}

// handle handles the first n events of the last wait and returns n.
func (l *evloop) handle(n int) int {
	now := l.e.now()
	for i := range n {
		ev := &l.events[i]
		if ev.Fd == wakeSlot {
			l.collectDials(now)
			continue
		}
		l.onEvent(l.e.conns[ev.Fd], ev.Events, now)
	}
	return n
}

// rawWaitMax is the longest wait the loop makes without telling the Go
// scheduler. A wait it is told of lets the runtime's monitor take the P
// away, and getting one back wakes the monitor: more system calls than
// the request costs. A wait it is not told of keeps the P, so with
// GOMAXPROCS 1 the other goroutines wait for it (the loop yields every
// rawWaitMax, see run); signals (GC, preemption) end it early (EINTR).
const rawWaitMax = time.Millisecond

// wait blocks on the epoll set epfd (l.epfd, or l.sleepFd) until an event
// or for d, and returns how many events it got.
func (l *evloop) wait(epfd int, d time.Duration) int {
	d = max(d, 0)
	for {
		var n int
		var err error
		if l.pwait2 {
			ts := unix.NsecToTimespec(int64(d))
			call := unix.Syscall6
			if d <= rawWaitMax {
				call = unix.RawSyscall6
			}
			r, _, errno := call(unix.SYS_EPOLL_PWAIT2, uintptr(epfd),
				uintptr(unsafe.Pointer(&l.events[0])), uintptr(len(l.events)), uintptr(unsafe.Pointer(&ts)), 0, 0)
			n = int(r)
			if errno != 0 {
				err = errno
			}
			if errno == unix.ENOSYS {
				l.pwait2 = false // before Linux 5.11: millisecond waits
				continue
			}
		} else {
			n, err = unix.EpollWait(epfd, l.events, int((d+time.Millisecond-1)/time.Millisecond))
		}
		if err == unix.EINTR {
			return 0
		}
		if err != nil {
			// Cannot happen with a valid epoll descriptor; do not spin.
			time.Sleep(d)
			return 0
		}
		return n
	}
}

// dispatch writes every attempt due at now onto idle connections, oldest
// idle first: the schedule's requests and the retries whose time has
// come, in the order they fell due; and opens more connections if they
// wait too long. An attempt the client's throttle refuses is recorded
// unsent.
func (l *evloop) dispatch(now int64) {
	e := l.e
	due := min(e.sched.DueBy(now), e.planned)
	polled := false
	for {
		n := e.next.Load()
		retry := l.retryDue(now) && (n >= due || l.retries.top().at <= e.sched.At(n))
		if !retry && n >= due {
			return
		}
		if l.idle.n == 0 {
			// Responses may have come in since the last wait: read them
			// before taking every connection for busy.
			if !polled {
				polled = true
				if l.handle(l.wait(l.epfd, 0)) > 0 {
					continue
				}
			}
			l.connShortAt = now
			l.growIfLate(now, n, due)
			return
		}
		var a attempt
		if retry {
			a = l.retries.pop()
		} else {
			e.next.Store(n + 1)
			a = attempt{at: e.sched.At(n), seq: e.sched.Seq(n)}
		}
		if l.clientWaits && now-a.at >= int64(l.attemptTimeout) {
			l.expire(a, now)
			continue
		}
		if l.client != nil && !l.client.Send(now, a.n > 0) {
			l.recordUnsent(a, record.FlagNotSent|record.FlagGaveUp, now)
			continue
		}
		l.send(l.idle.pop(), a)
	}
}

// send writes attempt a on idle conn c (or, if c is not connected, dials
// and sends it when connected). A first try's key and operation are
// picked here.
func (l *evloop) send(c *conn, a attempt) {
	e := l.e
	if a.n == 0 {
		a.op, a.key = c.pick.Next(a.seq)
	}
	c.o = a.outcome(l.connWait(a.at))
	c.ev.busy = true
	e.countSent(1) // until recorded, waiting for its conn's dial too
	if c.ev.fd < 0 {
		c.o.Flags |= record.FlagConnWait // it waits for its connection's dial
		c.ev.waiting = true
		l.dial(c)
		return
	}
	l.sendNow(c)
}

// connWait is record.FlagConnWait if an attempt due at at waited for a
// connection (see connShortAt), else 0.
func (l *evloop) connWait(at int64) uint8 {
	if at <= l.connShortAt {
		return record.FlagConnWait
	}
	return 0
}

// write writes b (what is left of c's request) and, if the socket does not
// take all of it, watches it for writability.
func (l *evloop) write(c *conn, b []byte) {
	for len(b) > 0 {
		n, err := unix.Write(c.ev.fd, b)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			if c.ev.unwritten == nil {
				l.rewatch(c, true)
			}
			c.ev.unwritten = b
			return
		case err != nil:
			l.broken(c, os.NewSyscallError("write", err))
			return
		}
		b = b[n:]
	}
	if c.ev.unwritten != nil {
		c.ev.unwritten = nil
		l.rewatch(c, false)
	}
}

// onEvent handles what epoll reported for c.
func (l *evloop) onEvent(c *conn, events uint32, now int64) {
	if c.ev.connecting {
		l.finishConnect(c, now)
		return
	}
	if c.ev.fd < 0 {
		return // closed earlier in this round
	}
	if events&unix.EPOLLOUT != 0 && c.ev.unwritten != nil {
		l.write(c, c.ev.unwritten)
		if c.ev.fd < 0 {
			return
		}
	}
	if events&(unix.EPOLLIN|unix.EPOLLHUP|unix.EPOLLERR) == 0 {
		return
	}
	if c.ev.rn == len(c.ev.rbuf) {
		c.ev.rbuf = append(c.ev.rbuf, make([]byte, len(c.ev.rbuf))...)
	}
	n, rx, err := l.recv(c)
	if n > 0 {
		l.stamping = rx != 0
	}
	switch {
	case err == unix.EAGAIN || err == unix.EINTR:
		return
	case err != nil:
		l.broken(c, os.NewSyscallError("read", err))
		return
	case n == 0:
		l.broken(c, io.EOF)
		return
	}
	c.ev.rn += n
	if !c.ev.busy {
		// Bytes nobody asked for (a server's 408 on an idle connection
		// before it closes it): dial a new connection before use.
		l.broken(c, nil)
		return
	}
	f, ok, perr := parseResponseHead(c.ev.rbuf[:c.ev.rn])
	if perr != nil {
		l.broken(c, perr)
		return
	}
	if !ok || c.ev.rn < f.headerLen+f.bodyLen {
		return // more to come
	}
	c.o.Code, c.o.BytesIn, c.o.End = f.code, f.bodyLen, l.endTime(rx, c.o.Sent)
	c.ev.rn, c.ev.retryAfter = 0, f.retryAfter
	l.done(c)
	c.served++
	if f.closeAfter {
		l.drop(c)
		l.dial(c)
		return
	}
	l.idle.push(c)
}

// recv reads what has arrived on c's socket into c.ev.rbuf[rn:] and
// returns the kernel's receive time of it (wall clock, ns; 0 if none came
// with it).
func (l *evloop) recv(c *conn) (n int, rx int64, err error) {
	b := c.ev.rbuf[c.ev.rn:]
	var oob [rxControlLen]byte
	iov := unix.Iovec{Base: &b[0]}
	iov.SetLen(len(b))
	msg := unix.Msghdr{Iov: &iov, Iovlen: 1, Control: &oob[0]}
	msg.SetControllen(len(oob))
	r, _, errno := unix.Syscall(unix.SYS_RECVMSG, uintptr(c.ev.fd), uintptr(unsafe.Pointer(&msg)), 0)
	if errno != 0 {
		return 0, 0, errno
	}
	return int(r), rxTimestamp(oob[:msg.Controllen]), nil
}

// rxControlLen is room for one SCM_TIMESTAMPNS message (32 bytes on
// 64-bit Linux) and then some.
const rxControlLen = 64

// rxTimestamp returns the SCM_TIMESTAMPNS time (ns) in the control
// messages oob, or 0.
func rxTimestamp(oob []byte) int64 {
	for len(oob) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		if h.Len < unix.SizeofCmsghdr || uint64(h.Len) > uint64(len(oob)) {
			return 0
		}
		data := oob[unix.CmsgLen(0):h.Len]
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && len(data) >= int(unsafe.Sizeof(unix.Timespec{})) {
			return (*unix.Timespec)(unsafe.Pointer(&data[0])).Nano()
		}
		oob = oob[min(unix.CmsgSpace(len(data)), len(oob)):]
	}
	return 0
}

// endTime is when a response to a request sent at sent (ns since the
// run's start) ended, whose last bytes the kernel received at rx (wall
// clock, ns; 0: unknown): rx on the run's clock where that lies between
// sent and now (a wall clock stepped during the run does not), else now.
// The start's wall and monotonic readings are taken together and both
// clocks run at the same rate (NTP slews both).
func (l *evloop) endTime(rx, sent int64) int64 {
	now := l.e.now()
	if rx == 0 {
		return now
	}
	if end := rx - l.e.start.UnixNano(); end >= sent && end <= now {
		return end
	}
	return now
}

// broken handles the end of c's connection: err is why, nil only for an
// idle one (which needs no reason).
func (l *evloop) broken(c *conn, err error) {
	got := c.ev.rn
	l.drop(c)
	switch {
	case !c.ev.busy:
		// The server closed the idle connection, or spoke unasked on it:
		// reconnect before use.
		if c.idle {
			l.idle.remove(c)
		}
	case got == 0 && c.served > 0 && !c.ev.retried:
		// The server closed it while idle as the request went out: send
		// it again on a fresh connection (see fastEngine.conclude).
		c.ev.retried = true
		c.ev.waiting = true
		c.o.Flags |= record.FlagConnWait
	default:
		l.fail(c, err, l.e.now())
	}
	l.dial(c)
}

// fail records c's request as failed with err.
func (l *evloop) fail(c *conn, err error, now int64) {
	c.o.Err, c.o.Code, c.o.End = err, 0, now
	l.done(c)
}

// done records c's request and counts it off those in flight.
func (l *evloop) done(c *conn) {
	if l.autoQuantum && c.o.Err == nil {
		l.answers.Add(time.Duration(c.o.End - c.o.Sent))
		if l.answers.N%requantumEvery == 0 {
			l.p.Quantum = schedule.QuantumFor(l.loopRate, l.answers.Median())
		}
	}
	if l.client != nil {
		l.decide(&c.o, time.Duration(c.ev.retryAfter)*time.Second)
	}
	c.record()
	c.ev.busy, c.ev.waiting, c.ev.retried, c.ev.retryAfter = false, false, false, 0
	l.e.inFlight.Add(-1)
}

// drop closes c's connection, which takes it off the epoll set.
func (l *evloop) drop(c *conn) {
	if c.ev.fd >= 0 {
		unix.Close(c.ev.fd)
		c.ev.fd = -1
	}
	c.ev.rn, c.ev.unwritten = 0, nil
}

// dial connects c, unless a dial is under way: a conn that had a
// connection by the loop's own connect, a new one in a goroutine.
func (l *evloop) dial(c *conn) {
	if c.ev.dialing {
		return
	}
	c.ev.dialing = true
	l.dialing++
	if c.ev.slot >= 0 && l.sa != nil {
		if err := l.startConnect(c); err != nil {
			l.handBack(dialResult{c: c, fd: -1, err: l.dialError(err)})
		}
		return
	}
	l.dialWG.Go(func() {
		fd, err := dialRaw(l.e.t.Host, l.e.cfg.Timeout)
		l.handBack(dialResult{c: c, fd: fd, err: err}) // close waits for this before it closes wakeFd
	})
}

// handBack hands the outcome of a dial to the loop's next round and wakes
// the loop: the dial channel has room for one dial per conn.
func (l *evloop) handBack(r dialResult) {
	l.dials <- r
	one := [8]byte{1}
	_, _ = unix.Write(l.wakeFd, one[:])
}

// growIfLate dials another connection if the oldest unsent due request
// (the schedule's oldest..due-1, or a retry) has waited GrowAfter, the
// cap allows, and fewer growth dials are under way than requests wait.
func (l *evloop) growIfLate(now int64, oldest, due uint64) {
	e := l.e
	waiting, oldestAt := due-min(oldest, due), e.sched.At(oldest)
	if l.retryDue(now) {
		waiting++ // at least one retry waits too
		oldestAt = min(oldestAt, l.retries.top().at)
	}
	if id, ok := e.mayGrow(now, oldestAt, waiting); ok {
		l.dial(e.newConn(id))
	}
}

// collectDials takes the sockets of finished dials.
func (l *evloop) collectDials(now int64) {
	var buf [8]byte
	_, _ = unix.Read(l.wakeFd, buf[:])
	for {
		select {
		case r := <-l.dials:
			l.dialing--
			l.dialed(r, now)
		default:
			return
		}
	}
}

// dialed puts the outcome of c's dial to use.
func (l *evloop) dialed(r dialResult, now int64) {
	e, c := l.e, r.c
	c.ev.dialing = false
	grown := c.ev.slot < 0
	if grown {
		e.dialing--
	}
	if r.err == nil && grown && l.stopped {
		unix.Close(r.fd)
		return
	}
	if r.err == nil {
		r.err = l.attach(c, r.fd, r.watched)
	}
	if r.err != nil {
		if grown {
			e.growHold = now + int64(growRetryAfter)
			return
		}
		c.dead = true
		if c.ev.waiting {
			c.o.Sent = now
			l.fail(c, r.err, now)
		}
		if !l.stopped {
			l.idle.push(c) // dead: its next request dials again
		}
		return
	}
	if !grown {
		e.col.Reconnected(e.now())
	}
	if c.ev.waiting {
		c.ev.waiting = false
		l.sendNow(c)
		return
	}
	if l.stopped {
		l.drop(c)
		return
	}
	l.idle.push(c) // the loop sends on it what is due once it has handled its events
}

// watchdog fails the requests that have run longer than their client
// waits (Config.Timeout, or the client model's own timeout) and replaces
// their connections: an HTTP/1.1 client that gives up on an answer must
// close the connection it was to come on.
func (l *evloop) watchdog(now int64) {
	e := l.e
	for _, c := range e.conns {
		if c.ev.connecting && time.Duration(now-c.ev.connSince) > e.cfg.Timeout {
			l.connectDone(c, os.NewSyscallError("connect", unix.ETIMEDOUT), now)
			continue
		}
		if c.ev.busy && !c.ev.waiting && c.ev.fd >= 0 && time.Duration(now-l.waitingSince(&c.o)) > l.attemptTimeout {
			l.drop(c)
			l.fail(c, l.timeoutErr, now)
			l.dial(c)
		}
	}
}

// close releases every descriptor once the dial goroutines are done.
func (l *evloop) close() {
	l.dialWG.Wait()
	for _, c := range l.e.conns {
		l.drop(c)
		if c.ev.connecting {
			unix.Close(c.ev.cfd)
			c.ev.connecting, c.ev.cfd = false, -1
		}
	}
	for _, fd := range []int{l.wakeFd, l.epfd, l.sleepFd} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// dialRaw opens a TCP connection to host (net.Dial: the Go netpoller
// waits for it, no thread blocks) and returns a duplicate of its
// descriptor, taken before the net.Conn is closed (which takes the
// original off the netpoller). The socket stays non-blocking, with
// Nagle's algorithm off. Errors are net.Dial's (*net.OpError, Op "dial").
func dialRaw(host string, timeout time.Duration) (int, error) {
	conn, err := net.DialTimeout("tcp", host, timeout)
	if err != nil {
		return -1, err
	}
	defer conn.Close()
	rc, err := conn.(*net.TCPConn).SyscallConn()
	if err != nil {
		return -1, err
	}
	fd, dupErr := -1, error(nil)
	if err := rc.Control(func(s uintptr) { fd, dupErr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return -1, err
	}
	if dupErr != nil {
		return -1, os.NewSyscallError("fcntl", dupErr)
	}
	return fd, nil
}

// startConnect begins the loop's own connect of c (a conn with a slot,
// whose connection is gone): a non-blocking socket, Nagle's algorithm off
// as net.Dial leaves it, and the socket in the epoll set watched for
// writability, which comes once the handshake ends or fails
// (finishConnect); the watchdog gives up on it after Config.Timeout. A
// connect that fails at once returns its error, which dial hands back
// through the dial channel, so that its failure is recorded from the
// loop's round, not inside whatever called dial (a send, which holds c off
// the idle list).
func (l *evloop) startConnect(c *conn) error {
	fd, err := unix.Socket(l.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return os.NewSyscallError("socket", err)
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	if err := unix.Connect(fd, l.sa); err != nil && err != unix.EINPROGRESS && err != unix.EINTR {
		// (After EINTR the connect goes on, as after EINPROGRESS.)
		unix.Close(fd)
		return os.NewSyscallError("connect", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLOUT, Fd: int32(c.ev.slot)}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		unix.Close(fd)
		return os.NewSyscallError("epoll_ctl", err)
	}
	c.ev.connecting, c.ev.cfd, c.ev.connSince = true, fd, l.e.now()
	return nil
}

// finishConnect takes up c's connect once epoll has reported its socket.
func (l *evloop) finishConnect(c *conn, now int64) {
	soErr, err := unix.GetsockoptInt(c.ev.cfd, unix.SOL_SOCKET, unix.SO_ERROR)
	switch {
	case err != nil:
		err = os.NewSyscallError("getsockopt", err)
	case soErr != 0:
		err = os.NewSyscallError("connect", unix.Errno(soErr))
	}
	l.connectDone(c, err, now)
}

// connectDone ends c's connect under way: connected where err is nil,
// else failed with err, its socket closed (which takes it off the epoll
// set).
func (l *evloop) connectDone(c *conn, err error, now int64) {
	r := dialResult{c: c, fd: c.ev.cfd, watched: true}
	if err != nil {
		unix.Close(c.ev.cfd)
		r = dialResult{c: c, fd: -1, err: l.dialError(err)}
	}
	c.ev.connecting, c.ev.cfd = false, -1
	l.dialing--
	l.dialed(r, now)
}

// dialError is err as net.Dial would give it (*net.OpError, Op "dial"),
// so that a failed connect is counted and described as a failed dial.
func (l *evloop) dialError(err error) error {
	return &net.OpError{Op: "dial", Net: "tcp", Addr: l.addr, Err: err}
}

// learnTarget takes the address fd's connection reached, which net.Dial
// resolved from the target and chose among its addresses, for the loop's
// own connects: every later one goes there without a lookup.
func (l *evloop) learnTarget(fd int) {
	sa, err := unix.Getpeername(fd)
	if err != nil {
		return
	}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		l.sa, l.family = a, unix.AF_INET
		l.addr = &net.TCPAddr{IP: net.IPv4(a.Addr[0], a.Addr[1], a.Addr[2], a.Addr[3]), Port: a.Port}
	case *unix.SockaddrInet6:
		l.sa, l.family = a, unix.AF_INET6
		l.addr = &net.TCPAddr{IP: append(net.IP(nil), a.Addr[:]...), Port: a.Port}
	}
}
