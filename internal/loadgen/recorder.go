package loadgen

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/latency"
)

// lateThreshold is how far behind schedule a send may start before it
// counts as late in Result.Late.
const lateThreshold = time.Millisecond

// maxCode bounds the status codes counted individually; anything else
// (which a conforming server never sends) is counted under code 0.
const maxCode = 600

// outcome is what one request produced.
type outcome struct {
	seq      uint64
	key      uint64
	op       api.Method
	intended int64 // when it was due, ns since the start (== sent if unpaced)
	sent     int64 // when its first byte was written, ns since the start
	end      int64 // when its response was read, ns since the start
	code     int   // 0 if err != nil
	bytesOut int
	bytesIn  int
	err      error
	// attempt is 0 for a request's first try, n for its n-th retry
	// (Config.Client); flags say what became of it (see flagGaveUp).
	attempt uint8
	flags   uint8
}

// What became of an attempt (outcome.flags, record.flags) under a client
// model (Config.Client).
const (
	// flagGaveUp: the attempt failed and its client gave up on the
	// request (no retry left, or the budget or the throttle refused one).
	flagGaveUp uint8 = 1 << iota
	// flagTimeout: the client gave up waiting for the attempt.
	flagTimeout
	// flagNotSent: the attempt was never sent: the client's throttle
	// refused it, or the run ended while it waited for its backoff.
	// Such a record has no latency and no status and counts in no
	// histogram; it is there so that every attempt is accounted for once.
	flagNotSent
	// flagRunEnded (with flagNotSent): a retry still waiting for its
	// backoff when the run ended; otherwise the throttle refused it.
	flagRunEnded
	// flagConnWait: the attempt waited for a connection before it was
	// sent or expired: it fell due while every connection was busy
	// waiting on the server (the event loop found none idle at or after
	// its time), or its connection had to be dialled again first. Its
	// send lag is then the server's doing, not the loader's. Set with or
	// without a client model, by the event loop only.
	flagConnWait
)

// record is one request's outcome as the collector receives it. It holds
// no pointers, so chunks of them cost the garbage collector nothing, and it
// has a fixed binary form (see spool.go).
type record struct {
	seq      uint64
	key      uint64
	intended int64 // ns since the start
	sent     int64 // ns since the start
	latency  int64 // ns, from sent
	bytesOut uint32
	bytesIn  uint32
	code     uint16
	errIdx   uint16 // 0: none; otherwise 1 + index into the run's error table
	op       api.Method
	attempt  uint8
	flags    uint8
}

// end is when the response ended, ns since the start: when its last bytes
// reached the socket where the kernel stamped them (the event loop), else
// when it was read.
func (rc *record) end() int64 { return rc.sent + rc.latency }

// recorder takes the outcomes of one connection (one goroutine calls add)
// and hands them to the run's collector in chunks. add costs an uncontended
// lock and a copy into a preallocated chunk: the histograms, counters,
// interval logs and results.bin are all kept by the collector's goroutine,
// off the connection's path, and a recorder holds no histogram of its own,
// so connections are cheap in memory too.
//
// Only live and errCount are read by others while the run goes on (the
// progress line).
type recorder struct {
	col *collector

	live     latency.Live // corrected, microseconds; read concurrently
	errCount atomic.Int64 // read concurrently

	// sent counts the outcomes added; read by others only after the
	// recorder's goroutine has exited.
	sent int64

	mu    sync.Mutex // guards chunk against the collector's swap
	chunk *chunk
}

// newRecorder returns a recorder feeding c, the run's collector.
func (c *collector) newRecorder() *recorder {
	r := &recorder{col: c, chunk: c.newChunk()}
	c.register(r)
	return r
}

// add records o.
func (r *recorder) add(o *outcome) {
	r.col.startOnce(o.end)
	r.sent++
	var errIdx uint16
	if o.flags&flagNotSent == 0 { // one never sent has no latency, and fails no request of the lab's
		r.live.Record(latency.Micros(time.Duration(o.end - o.intended)))
		if msg := failure(o); msg != "" {
			r.errCount.Add(1)
			errIdx = r.col.errors.indexOf(msg) + 1
		}
	}
	r.mu.Lock()
	c := r.chunk
	c.recs = append(c.recs, record{
		seq: o.seq, key: o.key, intended: o.intended, sent: o.sent, latency: o.end - o.sent,
		bytesOut: uint32(o.bytesOut), bytesIn: uint32(o.bytesIn),
		code: uint16(min(max(o.code, 0), maxCode)), errIdx: errIdx, op: o.op,
		attempt: o.attempt, flags: o.flags,
	})
	if len(c.recs) < cap(c.recs) {
		r.mu.Unlock()
		return
	}
	r.chunk = r.col.newChunk()
	r.mu.Unlock()
	r.col.full <- c
}

// swap takes the records added so far, leaving an empty chunk; nil if
// there are none. Called by the collector.
func (r *recorder) swap() *chunk {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.chunk.recs) == 0 {
		return nil
	}
	c := r.chunk
	r.chunk = r.col.newChunk()
	return c
}

// errorTable numbers the distinct error messages of a run, so that a
// record carries a small index instead of a string. Errors are the rare
// path: the table takes a lock.
type errorTable struct {
	mu    sync.Mutex
	msgs  []string
	index map[string]uint16
}

// maxErrorKinds keeps errIdx+1 in a uint16; further kinds share one entry.
const maxErrorKinds = 1<<16 - 2

func (t *errorTable) indexOf(msg string) uint16 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.index == nil {
		t.index = make(map[string]uint16)
	}
	i, ok := t.index[msg]
	if ok {
		return i
	}
	if len(t.msgs) == maxErrorKinds-1 {
		msg = "other errors"
		if i, ok = t.index[msg]; ok {
			return i
		}
	}
	i = uint16(len(t.msgs))
	t.index[msg] = i
	t.msgs = append(t.msgs, msg)
	return i
}

// message returns the message of index i.
func (t *errorTable) message(i uint16) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.msgs[i]
}

// failure says why o is an error, or "" if it is not. Errors are transport
// failures and statuses other than 2xx, except 404 on GET (an absent key is
// an answer, not a failure). 503 (shed by the server) is an error: the
// saturation search must not call a rate sustainable while it sheds.
func failure(o *outcome) string {
	if o.err != nil {
		return describeError(o.err)
	}
	if o.code >= 200 && o.code < 300 || o.code == 404 && o.op == api.Get {
		return ""
	}
	return statusText(o.code)
}
