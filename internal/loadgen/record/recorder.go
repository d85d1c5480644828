package record

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/latency"
)

// LateThreshold is how far behind schedule a send may start before it
// counts as late in Result.Late.
const LateThreshold = time.Millisecond

// maxCode bounds the status codes counted individually; anything else
// (which a conforming server never sends) is counted under code 0.
const maxCode = 600

// Outcome is what one request produced.
type Outcome struct {
	Seq      uint64
	Key      uint64
	Op       api.Method
	Intended int64 // when it was due, ns since the start (== sent if unpaced)
	Sent     int64 // when its first byte was written, ns since the start
	End      int64 // when its response was read, ns since the start
	Code     int   // 0 if err != nil
	BytesOut int
	BytesIn  int
	Err      error
	// Attempt is 0 for a request's first try, n for its n-th retry
	// (Config.Client); flags say what became of it (see FlagGaveUp).
	Attempt uint8
	Flags   uint8
}

// What became of an attempt (outcome.flags, record.flags) under a client
// model (Config.Client).
const (
	// FlagGaveUp: the attempt failed and its client gave up on the
	// request (no retry left, or the budget or the throttle refused one).
	FlagGaveUp uint8 = 1 << iota
	// FlagTimeout: the client gave up waiting for the attempt.
	FlagTimeout
	// FlagNotSent: the attempt was never sent: the client's throttle
	// refused it, or the run ended while it waited for its backoff.
	// Such a record has no latency and no status and counts in no
	// histogram; it is there so that every attempt is accounted for once.
	FlagNotSent
	// FlagRunEnded (with FlagNotSent): a retry still waiting for its
	// backoff when the run ended; otherwise the throttle refused it.
	FlagRunEnded
	// FlagConnWait: the attempt waited for a connection before it was
	// sent or expired: it fell due while every connection was busy
	// waiting on the server (the event loop found none idle at or after
	// its time), or its connection had to be dialled again first. Its
	// send lag is then the server's doing, not the loader's. Set with or
	// without a client model, by the event loop only.
	FlagConnWait
)

// Record is one request's outcome as the collector receives it. It holds
// no pointers, so chunks of them cost the garbage collector nothing, and it
// has a fixed binary form (see spool.go).
type Record struct {
	Seq      uint64
	Key      uint64
	Intended int64 // ns since the start
	Sent     int64 // ns since the start
	Latency  int64 // ns, from sent
	bytesOut uint32
	bytesIn  uint32
	Code     uint16
	errIdx   uint16 // 0: none; otherwise 1 + index into the run's error table
	op       api.Method
	Attempt  uint8
	Flags    uint8
}

// End is when the response ended, ns since the start: when its last bytes
// reached the socket where the kernel stamped them (the event loop), else
// when it was read.
func (rc *Record) End() int64 { return rc.Sent + rc.Latency }

// Recorder takes the outcomes of one connection (one goroutine calls Add)
// and hands them to the run's collector in chunks. Add costs an
// uncontended lock and a copy into a preallocated chunk: everything else
// is the collector goroutine's, off the connection's path, and a recorder
// holds no histogram of its own, so connections are cheap in memory too.
//
// Only live and ErrCount are read by others while the run goes on (the
// progress line).
type Recorder struct {
	col *Collector

	live     latency.Live // corrected, microseconds
	ErrCount atomic.Int64
	sent     int64 // outcomes added

	mu    sync.Mutex // guards chunk against the collector's swap
	chunk *chunk
}

// NewRecorder returns a recorder feeding c, the run's collector.
func (c *Collector) NewRecorder() *Recorder {
	r := &Recorder{col: c, chunk: c.newChunk()}
	c.register(r)
	return r
}

// Add records o.
func (r *Recorder) Add(o *Outcome) {
	r.col.startOnce(o.End)
	r.sent++
	var errIdx uint16
	if o.Flags&FlagNotSent == 0 { // one never sent has no latency, and fails no request of the lab's
		r.live.Record(latency.Micros(time.Duration(o.End - o.Intended)))
		if msg := Failure(o); msg != "" {
			r.ErrCount.Add(1)
			errIdx = r.col.errors.indexOf(msg) + 1
		}
	}
	r.mu.Lock()
	c := r.chunk
	c.recs = append(c.recs, Record{
		Seq: o.Seq, Key: o.Key, Intended: o.Intended, Sent: o.Sent, Latency: o.End - o.Sent,
		bytesOut: uint32(o.BytesOut), bytesIn: uint32(o.BytesIn),
		Code: uint16(min(max(o.Code, 0), maxCode)), errIdx: errIdx, op: o.Op,
		Attempt: o.Attempt, Flags: o.Flags,
	})
	if len(c.recs) < cap(c.recs) {
		r.mu.Unlock()
		return
	}
	r.chunk = r.col.newChunk()
	r.mu.Unlock()
	r.col.full <- c
}

// AddTo adds what r recorded so far to p (safe while the run goes).
func (r *Recorder) AddTo(p *Progress) {
	r.live.AddTo(&p.live)
	p.Errors += r.ErrCount.Load()
}

// swap takes the records added so far, leaving an empty chunk; nil if
// there are none.
func (r *Recorder) swap() *chunk {
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

func (t *errorTable) message(i uint16) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.msgs[i]
}

// Failure says why o is an error, or "" if it is not. Errors are transport
// failures and statuses other than 2xx, except 404 on GET (an absent key is
// an answer, not a failure). 503 (shed by the server) is an error: the
// saturation search must not call a rate sustainable while it sheds.
func Failure(o *Outcome) string {
	if o.Err != nil {
		return DescribeError(o.Err)
	}
	if o.Code >= 200 && o.Code < 300 || o.Code == 404 && o.Op == api.Get {
		return ""
	}
	return statusText(o.Code)
}
