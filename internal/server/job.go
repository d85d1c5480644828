package server

import (
	"errors"
	"sync"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/pool"
	"github.com/kvpool/kvpool/internal/store"
)

// job carries one request's store operation from the handler to a worker
// and its outcome back. The handler owns it until Submit, the pool until it
// calls Run or Reject, which signal done; then the handler owns it again.
// key and value are copies: fasthttp's request buffers must not be touched
// off the handler goroutine or after the handler returns.
type job struct {
	st    store.Store
	op    api.Method // Get, Put or Delete
	key   []byte
	value []byte // PUT: the body; GET: the value read

	status int // set before done is signalled
	reason pool.Reason
	err    error
	done   chan struct{} // capacity 1: Run and Reject never block on it
}

func (j *job) Run() {
	var err error
	switch j.op {
	case api.Get:
		j.value, err = j.st.Get(j.value[:0], j.key)
		j.status = 200
		if errors.Is(err, store.ErrNotFound) {
			j.status, err = 404, nil
		}
	case api.Put:
		err = j.st.Put(j.key, j.value)
		j.status = 201
	case api.Delete:
		err = j.st.Delete(j.key)
		j.status = 202
	}
	if err != nil {
		j.status, j.err = 500, err
	}
	j.done <- struct{}{}
}

func (j *job) Reject(r pool.Reason) {
	j.status, j.reason = 503, r
	j.done <- struct{}{}
}

// maxPooledBuffer caps the buffers a recycled job keeps, so one 1 MiB PUT
// does not pin a megabyte per pooled job for ever.
const maxPooledBuffer = 64 << 10

// jobPool recycles jobs so the request path allocates nothing per request
// once warm.
type jobPool struct{ p sync.Pool }

func newJobPool(st store.Store) *jobPool {
	jp := &jobPool{}
	jp.p.New = func() any { return &job{st: st, done: make(chan struct{}, 1)} }
	return jp
}

func (jp *jobPool) get(m api.Method, key []byte) *job {
	j := jp.p.Get().(*job)
	j.op, j.status, j.err = m, 0, nil
	j.key = append(j.key[:0], key...)
	j.value = j.value[:0]
	return j
}

func (jp *jobPool) put(j *job) {
	if cap(j.value) > maxPooledBuffer {
		j.value = nil
	}
	if cap(j.key) > maxPooledBuffer {
		j.key = nil
	}
	jp.p.Put(j)
}
