package bareserver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"
)

func TestHandlerAnswersTheAPIShape(t *testing.T) {
	f := func(method string, want int, body string) {
		t.Helper()
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetMethod(method)
		ctx.Request.SetRequestURI("/v0/entity?id=1")
		Handler(&ctx)
		assert.Equal(t, want, ctx.Response.StatusCode(), method)
		assert.Equal(t, body, string(ctx.Response.Body()), method)
	}
	f("GET", 200, "bare")
	f("PUT", 201, "")
	f("DELETE", 202, "")
	f("POST", 405, "")
}

func TestListenIsLoopbackOnly(t *testing.T) {
	ln, err := Listen("127.0.0.1:0")
	require.NoError(t, err)
	require.NoError(t, ln.Close())
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:80", "nonsense"} {
		_, err := Listen(addr)
		assert.Error(t, err, addr)
	}
}

func TestWithServiceTimeSleepsThenAnswersTheSame(t *testing.T) {
	answer := func(h fasthttp.RequestHandler) (int, string) {
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetMethod("GET")
		ctx.Request.SetRequestURI("/v0/entity?id=1")
		h(&ctx)
		return ctx.Response.StatusCode(), string(ctx.Response.Body())
	}
	code, body := answer(WithServiceTime(Handler, 0))
	assert.Equal(t, 200, code)
	assert.Equal(t, "bare", body)

	// 200 sleeps of mean 1 ms sum to 200 ms give or take 15 ms (one
	// standard deviation); less than half of that would mean no sleep.
	// Only a lower bound: a slow machine makes it longer, never shorter.
	h := WithServiceTime(Handler, time.Millisecond)
	start := time.Now()
	for range 200 {
		code, body := answer(h)
		require.Equal(t, 200, code)
		require.Equal(t, "bare", body)
	}
	assert.Greater(t, time.Since(start), 100*time.Millisecond)
}
