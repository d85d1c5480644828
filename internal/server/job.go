package server

import (
	"errors"
	"sync"

	"github.com/kvpool/kvpool/internal/api"
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

	status int // set before done is signalled
	reason pool.Reason
	err    error
	done   chan struct{} // capacity 1, ExecWorker only: Run and Reject never block on it
}

func (j *job) Run() {
	var err error
	switch j.op {
	case api.Get:
		j.out, err = j.st.Get(j.out[:0], j.key)
		j.status = 200
		if errors.Is(err, store.ErrNotFound) {
			j.status, err = 404, nil
		}
	case api.Put:
		err = j.st.Put(j.key, j.body)
		j.status = 201
	case api.Delete:
		err = j.st.Delete(j.key)
		j.status = 202
	}
	if err != nil {
		j.status, j.err = 500, err
	}
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
	j.key, j.body = nil, nil // borrowed: the request's, not ours to keep
	for _, b := range []*[]byte{&j.out, &j.keyBuf, &j.bodyBuf} {
		if cap(*b) > maxPooledBuffer {
			*b = nil
		}
	}
	jp.p.Put(j)
}
