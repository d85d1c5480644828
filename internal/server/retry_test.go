package server

import (
	"bufio"
	"strings"
	"testing"
	"time"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/pool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"
)

// factsOf is what scanHeaders reads from a GET with the given header
// lines.
func factsOf(t *testing.T, headers ...string) headerFacts {
	t.Helper()
	raw := "GET /v0/entity?id=1 HTTP/1.1\r\nHost: x\r\n"
	for _, h := range headers {
		raw += h + "\r\n"
	}
	var req fasthttp.Request
	require.NoError(t, req.Read(bufio.NewReader(strings.NewReader(raw+"\r\n"))))
	return scanHeaders(&req.Header)
}

// TestDeadlineHeaderForms: the client's remaining time is read from
// X-Request-Timeout-Ms, Envoy's x-envoy-expected-rq-timeout-ms and gRPC's
// grpc-timeout, the shortest where several are sent; a malformed or
// repeated one is a 400 naming its header.
func TestDeadlineHeaderForms(t *testing.T) {
	f := func(want time.Duration, headers ...string) {
		t.Helper()
		h := factsOf(t, headers...)
		got, bad := h.clientWait()
		assert.Empty(t, bad, "%q", headers)
		assert.Equal(t, want, got, "%q", headers)
	}
	f(0)
	f(250*time.Millisecond, "X-Envoy-Expected-Rq-Timeout-Ms: 250")
	f(250*time.Millisecond, "grpc-timeout: 250m")
	f(2*time.Second, "Grpc-Timeout: 2S")
	f(3*time.Minute, "grpc-timeout: 3M")
	f(time.Hour, "grpc-timeout: 1H")
	f(100*time.Microsecond, "grpc-timeout: 100u")
	f(7, "grpc-timeout: 7n")
	f(200*time.Millisecond, "X-Request-Timeout-Ms: 1000", "grpc-timeout: 200m", "x-envoy-expected-rq-timeout-ms: 500")
	f(300*time.Millisecond, "X-Request-Timeout-Ms: 300", "grpc-timeout: 2S")

	bad := func(name string, headers ...string) {
		t.Helper()
		h := factsOf(t, headers...)
		_, msg := h.clientWait()
		assert.True(t, strings.HasPrefix(msg, name), "%q: %q", headers, msg)
	}
	for _, v := range []string{"0m", "5", "5x", "m", "123456789m", "-5m", "1.5S"} {
		bad(api.HeaderGRPCTimeout, "grpc-timeout: "+v)
	}
	bad(api.HeaderGRPCTimeout, "grpc-timeout: 5m", "grpc-timeout: 5m")
	bad(api.HeaderEnvoyTimeout, "x-envoy-expected-rq-timeout-ms: 0")
	bad(api.HeaderEnvoyTimeout, "x-envoy-expected-rq-timeout-ms: 5ms")
}

// TestRetryMarks: Envoy's attempt count above 1, or gRPC's previous
// attempts above 0, mark a retry; a first try says 1 or 0, or nothing; a
// malformed or repeated mark is a 400 naming its header.
func TestRetryMarks(t *testing.T) {
	f := func(want bool, headers ...string) {
		t.Helper()
		h := factsOf(t, headers...)
		got, bad := h.retry()
		assert.Empty(t, bad, "%q", headers)
		assert.Equal(t, want, got, "%q", headers)
	}
	f(false)
	f(false, "X-Envoy-Attempt-Count: 1")
	f(true, "x-envoy-attempt-count: 2")
	f(true, "X-Envoy-Attempt-Count: 6")
	f(false, "grpc-previous-rpc-attempts: 0")
	f(true, "Grpc-Previous-Rpc-Attempts: 3")
	f(true, "X-Envoy-Attempt-Count: 1", "grpc-previous-rpc-attempts: 1")

	bad := func(name string, headers ...string) {
		t.Helper()
		h := factsOf(t, headers...)
		_, msg := h.retry()
		assert.True(t, strings.HasPrefix(msg, name), "%q: %q", headers, msg)
	}
	bad(api.HeaderAttemptCount, "X-Envoy-Attempt-Count: 0")
	bad(api.HeaderAttemptCount, "X-Envoy-Attempt-Count: two")
	bad(api.HeaderAttemptCount, "X-Envoy-Attempt-Count: 2", "X-Envoy-Attempt-Count: 3")
	bad(api.HeaderPreviousAttempts, "grpc-previous-rpc-attempts: -1")
}

// TestBadRetryOrDeadlineHeaderIsRefused: through the handler, a request
// whose grpc-timeout or attempt count cannot be read is answered 400
// naming the header, and its operation never reaches the store.
func TestBadRetryOrDeadlineHeaderIsRefused(t *testing.T) {
	st := newWatchedStore(t)
	st.forbidden.Store("bad", true)
	s, err := New(resolved(t, DefaultConfig()), st, Options{})
	require.NoError(t, err)
	defer s.pool.Close()
	for header, name := range map[string]string{
		"grpc-timeout: soon":       api.HeaderGRPCTimeout,
		"X-Envoy-Attempt-Count: x": api.HeaderAttemptCount,
	} {
		r := receive(t, serveAsync(t, s, "GET /v0/entity?id=bad HTTP/1.1\r\nHost: x\r\n"+header+"\r\n\r\n"))
		assert.Equal(t, 400, r.code, header)
		assert.Contains(t, r.body, name)
	}
	retry := "GET /v0/entity?id=good HTTP/1.1\r\nHost: x\r\nX-Envoy-Attempt-Count: 2\r\ngrpc-timeout: 5S\r\n\r\n"
	assert.Equal(t, 200, receive(t, serveAsync(t, s, retry)).code, "a well-marked retry is served as any request")
	hasMetric(t, s, "kvserver_deadline_requests_total 1")
}

// fixedDrain is a pool.Drainer whose queue drains in d.
type fixedDrain time.Duration

func (d fixedDrain) Drain(pool.Task) time.Duration { return time.Duration(d) }

// TestRetryAfterIsTheDrainTime: a 503's Retry-After is the time the
// pool's queue needs to drain, in whole seconds rounded up, at least 1
// and at most 60; a pool that cannot tell says 1.
func TestRetryAfterIsTheDrainTime(t *testing.T) {
	f := func(drain time.Duration, want int) {
		t.Helper()
		assert.Equal(t, want, retryAfterSeconds(drain), "%v", drain)
	}
	f(0, 1)
	f(20*time.Millisecond, 1)
	f(time.Second, 1)
	f(1200*time.Millisecond, 2)
	f(5*time.Minute, 60)

	s, err := New(resolved(t, DefaultConfig()), fixedStore{}, Options{})
	require.NoError(t, err)
	defer s.pool.Close()
	require.NotNil(t, s.drainer, "the default pool tells its drain time")
	header := func() string {
		ctx := new(fasthttp.RequestCtx)
		s.shed(ctx, &job{op: api.Get, reason: pool.ReasonFull})
		return string(ctx.Response.Header.Peek("Retry-After"))
	}
	assert.Equal(t, "1", header(), "an empty queue")
	s.drainer = fixedDrain(2500 * time.Millisecond)
	assert.Equal(t, "3", header())
	s.drainer = nil
	assert.Equal(t, "1", header())
}
