package server

import (
	"errors"
	"net"
	"sync"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/mono"
	"github.com/kvpool/kvpool/internal/pool"
	"github.com/kvpool/kvpool/internal/store"
)

// job carries one request's store operation through the pool and its
// outcome back. The handler owns it until Submit, the pool until it calls
// Run or Reject, then the handler again.
//
// Where Run and Reject are called matters for what job may hold, and the
// pool says where (pool.Pool.RunsOnSubmitter). Where the pool runs jobs
// on their submitter (-exec handler, and direct), Run and Reject are
// called on the handler's own goroutine before Submit returns, so key and
// body borrow the request's buffers (fasthttp's RequestCtx is the
// handler's until it returns) and nothing signals done. Otherwise (-exec
// worker) a worker goroutine calls them: key and body are then copies in
// keyBuf and bodyBuf (fasthttp forbids touching the request off its
// handler's goroutine), and done carries the signal back.
type job struct {
	st        store.Store
	inHandler bool // Run and Reject happen on the submitting goroutine
	op        api.Method
	key       []byte // the request's id: borrowed, or keyBuf
	body      []byte // PUT: the request's body: borrowed, or bodyBuf
	out       []byte // GET: the value read, into a buffer the job keeps

	keyBuf, bodyBuf []byte // ExecWorker's copies, kept for reuse

	// deadline is when the client stops waiting (mono; 0: it did not
	// say), from X-Request-Timeout-Ms. conn is the request's connection,
	// for Abandoned; net.Conn is safe to use from any goroutine, unlike
	// the RequestCtx.
	deadline int64
	conn     net.Conn
	// retry: the client marked the request as a retry (see
	// pool.Retried).
	retry bool

	status int // set before done is signalled
	reason pool.Reason
	err    error
	// inStore: the 503 came from the store's give-up (store.ErrDeadline),
	// not the pool. wasted: the operation ran and finished past the
	// deadline.
	inStore, wasted bool
	done            chan struct{} // capacity 1, ExecWorker only: Run and Reject never block on it
}

func (j *job) Run() {
	var err error
	switch j.op {
	case api.Get:
		j.out, err = j.st.Get(j.deadline, j.out[:0], j.key)
		j.status = 200
		if errors.Is(err, store.ErrNotFound) {
			j.status, err = 404, nil
		}
	case api.Put:
		err = j.st.Put(j.deadline, j.key, j.body)
		j.status = 201
	case api.Delete:
		err = j.st.Delete(j.deadline, j.key)
		j.status = 202
	}
	switch {
	case err == nil:
	case errors.Is(err, store.ErrDeadline):
		// Given up waiting for the store's capacity: nothing was touched.
		j.status, j.reason, j.inStore = 503, pool.ReasonDeadline, true
		err = nil
	default:
		j.status, j.err = 500, err
	}
	j.wasted = !j.inStore && j.deadline != 0 && mono.Passed(j.deadline, mono.Now())
	if !j.inHandler {
		j.done <- struct{}{}
	}
}

func (j *job) Reject(r pool.Reason) {
	j.status, j.reason = 503, r
	if !j.inHandler {
		j.done <- struct{}{}
	}
}

// Writes implements pool.Writer: a PUT or DELETE changes the store by
// its key and body (a DELETE's tombstone is its key).
func (j *job) Writes() (int, bool) { return len(j.key) + len(j.body), j.op != api.Get }

// Retry implements pool.Retried.
func (j *job) Retry() bool { return j.retry }

// Deadline implements pool.Task.
func (j *job) Deadline() int64 { return j.deadline }

// Abandoned implements pool.Abandonable: the pool asks it of a job that
// waited past -drop-closed-after, on whatever goroutine admits the job.
func (j *job) Abandoned() bool { return j.conn != nil && peerClosed(j.conn) }

// maxPooledBuffer caps the buffers a recycled job keeps, so one 1 MiB PUT
// does not pin a megabyte per pooled job for ever.
const maxPooledBuffer = 64 << 10

// jobPool recycles jobs so the request path allocates nothing per request
// once warm.
type jobPool struct {
	p         sync.Pool
	inHandler bool
}

// newJobPool makes jobs over st for a pool that runs them on their
// submitter (inHandler) or not.
func newJobPool(st store.Store, inHandler bool) *jobPool {
	jp := &jobPool{inHandler: inHandler}
	jp.p.New = func() any {
		j := &job{st: st, inHandler: inHandler}
		if !inHandler {
			j.done = make(chan struct{}, 1)
		}
		return j
	}
	return jp
}

// get returns a job for op on key with body (PUT), borrowing both or
// copying them as the exec mode allows (see job).
func (jp *jobPool) get(op api.Method, key, body []byte) *job {
	j := jp.p.Get().(*job)
	j.op, j.status, j.err = op, 0, nil
	j.inStore, j.wasted = false, false
	if jp.inHandler {
		j.key, j.body = key, body
		return j
	}
	j.keyBuf = append(j.keyBuf[:0], key...)
	j.bodyBuf = append(j.bodyBuf[:0], body...)
	j.key, j.body = j.keyBuf, j.bodyBuf
	return j
}

// wait returns once the pool has answered j.
func (j *job) wait() {
	if !j.inHandler {
		<-j.done
	}
}

func (jp *jobPool) put(j *job) {
	j.key, j.body, j.conn = nil, nil, nil // borrowed: the request's, not ours to keep
	j.deadline = 0
	for _, b := range []*[]byte{&j.out, &j.keyBuf, &j.bodyBuf} {
		if cap(*b) > maxPooledBuffer {
			*b = nil
		}
	}
	jp.p.Put(j)
}
