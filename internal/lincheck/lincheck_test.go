package lincheck

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/api"
)

// TestValues: a value names its PUT and has the size asked (at least its
// name); any other body is Corrupt.
func TestValues(t *testing.T) {
	f := func(id int64, size int) {
		t.Helper()
		v := valueOf(id, size)
		assert.Len(t, v, max(size, len(valueOf(id, 0))))
		assert.Equal(t, id, valueID(v, size), "%q", v)
		assert.Equal(t, Corrupt, valueID(v[:len(v)-1], size), "truncated")
		assert.Equal(t, Corrupt, valueID(v, len(v)+1), "written at another size")
	}
	f(1, 0)
	f(7, 10)
	f(123456789, 4096)
	f(42, 64<<10)

	mixed := valueOf(12, 64)
	copy(mixed[32:], valueOf(13, 32))
	for _, body := range [][]byte{nil, []byte("lincheck-"), []byte("lincheck-;"), []byte("lincheck-0;"),
		[]byte("lincheck-07;"), []byte("lincheck-+7;"), []byte("other-7;"), mixed} {
		assert.Equal(t, Corrupt, valueID(body, 0), "%q", body)
	}
}

// op is an operation of a synthetic history.
func op(client int, kind Kind, key string, value int64, call, ret int64) porcupine.Operation {
	in, out := Input{Kind: kind, Key: key}, Output{}
	if kind == Get {
		out.Value = value
	} else {
		in.Value = value
	}
	return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
}

// TestCheckSynthetic: Check's verdicts on small histories written out.
func TestCheckSynthetic(t *testing.T) {
	f := func(name string, want Verdict, ops ...porcupine.Operation) {
		t.Run(name, func(t *testing.T) {
			prefix := filepath.Join(t.TempDir(), "view")
			res, err := Check([]History{{Epoch: 3, Ops: ops}}, CheckOptions{HTMLPrefix: prefix})
			require.NoError(t, err)
			assert.Equal(t, want, res.Verdict)
			if want == Illegal {
				require.Len(t, res.Views, 1)
				assert.Equal(t, prefix+"-epoch3-k.html", res.Views[0])
				html, err := os.ReadFile(res.Views[0])
				require.NoError(t, err)
				// The operations are in it as JSON, where > is \u003e.
				assert.True(t, strings.Contains(string(html), `"get(k) -\u003e `), "the view shows no get(k)")
			} else {
				assert.Empty(t, res.Views)
			}
		})
	}
	f("sequential", OK,
		op(0, Get, "k", Absent, 0, 1), op(0, Put, "k", 1, 2, 3), op(0, Get, "k", 1, 4, 5),
		op(0, Delete, "k", 0, 6, 7), op(0, Get, "k", Absent, 8, 9))
	f("a read overlapping a write may return either", OK,
		op(0, Put, "k", 1, 0, 1), op(1, Put, "k", 2, 2, 10), op(2, Get, "k", 1, 3, 4), op(2, Get, "k", 2, 5, 6))
	f("a read after an acknowledged write returns it", Illegal,
		op(0, Put, "k", 1, 0, 1), op(0, Put, "k", 2, 2, 3), op(1, Get, "k", 1, 4, 5))
	f("read-read inversion while a write is in flight", Illegal,
		op(0, Put, "k", 1, 0, 1), op(1, Put, "k", 2, 2, 100), op(2, Get, "k", 2, 3, 4), op(3, Get, "k", 1, 5, 6))
	f("a write in doubt may have been applied", OK,
		op(0, Put, "k", 1, 0, 1), op(1, Put, "k", 2, 2, never), op(2, Get, "k", 1, 3, 4), op(2, Get, "k", 2, 5, 6))
	f("a write in doubt cannot be undone", Illegal,
		op(0, Put, "k", 1, 0, 1), op(1, Put, "k", 2, 2, never), op(2, Get, "k", 2, 3, 4), op(2, Get, "k", 1, 5, 6))
	f("an epoch starts from its Set", Illegal,
		op(0, Set, "k", 5, 0, 0), op(1, Get, "k", Absent, 1, 2))
	f("a corrupt value is read from no state", Illegal,
		op(0, Put, "k", 1, 0, 1), op(1, Get, "k", Corrupt, 2, 3), op(1, Get, "k", 1, 4, 5))
	f("keys are independent", OK,
		op(0, Put, "k", 1, 0, 1), op(1, Put, "j", 2, 0, 1), op(2, Get, "j", 2, 2, 3), op(2, Get, "k", 1, 4, 5))
}

// TestCheckUnknownIsNotAPass: a history porcupine cannot decide within the
// timeout is Unknown. Thirty concurrent PUTs, thirty concurrent GETs each
// of another PUT's value, then a GET of absent with no DELETE: illegal,
// but only after trying every order of the puts, which no timeout of
// milliseconds covers.
func TestCheckUnknownIsNotAPass(t *testing.T) {
	var ops []porcupine.Operation
	for i := range int64(30) {
		ops = append(ops, op(int(i), Put, "k", i+1, 0, 100), op(int(30+i), Get, "k", i+1, 0, 100))
	}
	ops = append(ops, op(60, Get, "k", Absent, 200, 201))
	res, err := Check([]History{{Ops: ops}}, CheckOptions{Timeout: 10 * time.Millisecond, HTMLPrefix: filepath.Join(t.TempDir(), "v")})
	require.NoError(t, err)
	assert.Equal(t, Unknown, res.Verdict)
	assert.Equal(t, 1, res.Unknown)
	assert.Empty(t, res.Views)
}

// fakeServer answers the /v0 API from a map: linearizable unless told
// otherwise.
type fakeServer struct {
	mu sync.Mutex
	m  map[string][]byte
	// forget: every GET answers 404.
	forget bool
	// late: every lateEvery-th PUT is answered 503 unapplied, and applied
	// just before the next PUT is (a write in doubt applied after its
	// answer, maybe in a later epoch).
	lateEvery int
	puts      int
	stash     func()
}

func newFakeServer() *fakeServer { return &fakeServer{m: map[string][]byte{}} }

func (s *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != api.PathEntity {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	key := r.URL.Query().Get("id")
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch r.Method {
	case http.MethodGet:
		v, ok := s.m[key]
		if !ok || s.forget {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Write(v)
	case http.MethodPut:
		if s.stash != nil {
			s.stash()
			s.stash = nil
		}
		s.puts++
		if s.lateEvery > 0 && s.puts%s.lateEvery == 0 {
			s.stash = func() { s.m[key] = body }
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		s.m[key] = body
		w.WriteHeader(http.StatusCreated)
	case http.MethodDelete:
		delete(s.m, key)
		w.WriteHeader(http.StatusAccepted)
	}
}

func testWorkload() Workload {
	return Workload{Keys: 2, Readers: 4, Writers: 4, ValueSize: 100, DeleteOneIn: 5, Timeout: time.Minute, Seed: 1}
}

// run drives w against srv for epochs of ops each and checks the result.
func run(t *testing.T, srv http.Handler, w Workload, epochs, ops int) (Result, *Runner) {
	t.Helper()
	ts := httptest.NewServer(srv)
	defer ts.Close()
	r, err := NewRunner(w)
	require.NoError(t, err)
	ctx := context.Background()
	for range epochs {
		r.Epoch(ctx, ts.URL, ops, nil)
		require.NoError(t, r.Close(ctx, ts.URL, false))
	}
	res, err := Check(r.Histories(), CheckOptions{HTMLPrefix: filepath.Join(t.TempDir(), "view")})
	require.NoError(t, err)
	t.Logf("%+v; %+v", r.Stats(), res)
	return res, r
}

// TestRunnerLinearizableServer: a map behind a lock passes, every
// operation recorded and checked.
func TestRunnerLinearizableServer(t *testing.T) {
	res, r := run(t, newFakeServer(), testWorkload(), 3, 300)
	assert.Equal(t, OK, res.Verdict)
	st := r.Stats()
	assert.Equal(t, 3*300+3*2, st.Reads+st.Writes, "every operation answered, and each epoch's closing reads")
	assert.Equal(t, st.Reads+st.Writes, res.Ops)
	assert.Equal(t, 2, res.Keys)
	assert.Equal(t, 3*2, res.Histories)
}

// TestRunnerWritesInDoubt: writes answered 503 but applied later, also
// after the epoch that sent them has closed, pass: a write in doubt may
// take effect at any time after it was sent.
func TestRunnerWritesInDoubt(t *testing.T) {
	s := newFakeServer()
	s.lateEvery = 7
	w := testWorkload()
	w.DeleteOneIn = 0
	res, r := run(t, s, w, 4, 200)
	assert.Equal(t, OK, res.Verdict)
	assert.Positive(t, r.Stats().InDoubt)
}

// TestRunnerForgetfulServerFails: the check can fail. A server whose GETs
// find nothing, with no DELETE in the workload: a read of absent after an
// acknowledged PUT is illegal, and the view is written.
func TestRunnerForgetfulServerFails(t *testing.T) {
	s := newFakeServer()
	s.forget = true
	w := testWorkload()
	w.DeleteOneIn = 0
	res, _ := run(t, s, w, 1, 100)
	assert.Equal(t, Illegal, res.Verdict)
	require.NotEmpty(t, res.Views)
	assert.FileExists(t, res.Views[0])
}

// TestRunnerRestart: a server killed midway and started again on the same
// data passes; one started on empty data fails (acknowledged writes lost).
// Only writers, all PUTs: every client has had an answer by the time half
// the epoch's operations have started, all but one per client, so each
// key has an acknowledged PUT before the kill.
func TestRunnerRestart(t *testing.T) {
	f := func(keep bool, want Verdict) {
		t.Helper()
		old := newFakeServer()
		ts := httptest.NewServer(old)
		defer ts.Close()
		w := Workload{Keys: 1, Writers: 4, ValueSize: 10, Timeout: time.Minute, Seed: 2}
		r, err := NewRunner(w)
		require.NoError(t, err)
		ctx := context.Background()
		r.Epoch(ctx, ts.URL, 100, func() { ts.CloseClientConnections(); ts.Close() })
		restarted := newFakeServer()
		if keep {
			restarted.m = old.m
		}
		ts2 := httptest.NewServer(restarted)
		defer ts2.Close()
		require.NoError(t, r.Close(ctx, ts2.URL, true))
		r.Epoch(ctx, ts2.URL, 100, nil)
		require.NoError(t, r.Close(ctx, ts2.URL, false))
		res, err := Check(r.Histories(), CheckOptions{})
		require.NoError(t, err)
		t.Logf("%+v; %+v", r.Stats(), res)
		assert.Equal(t, want, res.Verdict)
		assert.Positive(t, r.Stats().Unanswered, "requests cut off by the kill")
	}
	f(true, OK)
	f(false, Illegal)
}
