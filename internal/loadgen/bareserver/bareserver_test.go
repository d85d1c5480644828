package bareserver

import (
	"testing"

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
