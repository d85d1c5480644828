package server

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// limitConfig has a small body limit and a read timeout far longer than
// any wait in these tests: an answer that arrives within the wait was not
// produced by the timeout.
func limitConfig(t *testing.T) Config {
	cfg := testConfig(t, "fifo")
	cfg.MaxBodyBytes = 1000
	cfg.ReadTimeout = time.Minute
	return cfg
}

// allocatedDuring reports how many bytes the whole process allocated while
// f ran.
func allocatedDuring(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestBodyLimitBeforeRead: a Content-Length over -max-body is answered 413
// from the headers alone, with no body byte sent, and without allocating
// the declared size; so is a chunk size over the limit. A chunked body is
// cut off at the first chunk past the limit, while the client is still
// sending. Nothing refused is stored.
func TestBodyLimitBeforeRead(t *testing.T) {
	ts := start(t, limitConfig(t))
	const huge = 256 << 20 // an allocation of the declared size would show
	wait := 5 * time.Second

	f := func(name, head string) {
		t.Helper()
		c := ts.dial()
		var code int
		allocated := allocatedDuring(func() {
			c.send(head) // headers only: the body is never sent
			resp, _ := c.response(wait)
			code = resp.StatusCode
		})
		assert.Equal(t, 413, code, name)
		assert.Less(t, allocated, uint64(huge/4), "%s: the declared size was allocated", name)
		c.closedByServer(wait)
	}
	f("content-length", fmt.Sprintf("PUT %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", entity("cl"), huge))
	f("content-length just over", fmt.Sprintf("PUT %s HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\n\r\n", entity("cl1")))
	f("expect 100-continue", fmt.Sprintf("PUT %s HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", entity("expect"), huge))
	f("chunk size", fmt.Sprintf("PUT %s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n", entity("chunk"), huge))
	// 400+400 bytes are within the limit; the third chunk would pass it.
	// The terminating chunk is never sent: the answer cannot wait for it.
	chunk := fmt.Sprintf("190\r\n%s\r\n", strings.Repeat("c", 400))
	f("chunks", fmt.Sprintf("PUT %s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n%s%s%s", entity("chunks"), chunk, chunk, chunk))

	for _, k := range []string{"cl", "cl1", "expect", "chunk", "chunks"} {
		code, _, _ := ts.do("GET", entity(k), nil)
		assert.Equal(t, 404, code, "%s: a refused PUT stores nothing", k)
	}

	// Within the limit: chunked exactly at it, and Expect: 100-continue.
	c := ts.dial()
	resp, _ := c.roundTrip(fmt.Sprintf("PUT %s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n%s%s%s\r\n%s\r\n0\r\n\r\n",
		entity("chunked-ok"), chunk, chunk, "c8", strings.Repeat("c", 200)))
	assert.Equal(t, 201, resp.StatusCode)
	_, body, _ := ts.do("GET", entity("chunked-ok"), nil)
	assert.Equal(t, strings.Repeat("c", 1000), string(body))

	c = ts.dial()
	c.send(fmt.Sprintf("PUT %s HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n", entity("expect-ok")))
	resp, _ = c.response(wait)
	assert.Equal(t, 100, resp.StatusCode)
	resp, _ = c.roundTrip("hello")
	assert.Equal(t, 201, resp.StatusCode)
}

// TestHeaderLimit: a request line plus headers over -max-header is 431,
// while an id at -max-key with every byte percent-encoded (the longest
// request line the key limit admits) still fits the default.
func TestHeaderLimit(t *testing.T) {
	cfg := testConfig(t, "fifo")
	require.Equal(t, DefaultConfig().MaxHeaderBytes, cfg.MaxHeaderBytes)
	ts := start(t, cfg)

	c := ts.dial()
	resp, body := c.roundTrip(fmt.Sprintf("GET %s HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n", entity("k"), strings.Repeat("b", cfg.MaxHeaderBytes)))
	assert.Equal(t, 431, resp.StatusCode)
	assert.Contains(t, string(body), "-max-header")

	key := strings.Repeat("\xff", cfg.MaxKeyBytes)
	code, _, _ := ts.do("PUT", entity(key), []byte("longest"))
	require.Equal(t, 201, code)
	code, body, _ = ts.do("GET", entity(key), nil)
	assert.Equal(t, 200, code)
	assert.Equal(t, "longest", string(body))
}
