package engine

import (
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
)

// hostClientConn sends through a fasthttp.HostClient shared by all conns
// (it pools the connections, at most MaxConns). Each conn owns its Request
// and Response. HostClient only does whole round trips, so every request
// is handed to the conn's goroutine (the engine's per-request hand-off
// that the raw transport avoids): kept to compare against. Timeouts are
// HostClient's own (DoTimeout), not the watchdog's.
type hostClientConn struct {
	hc        *fasthttp.HostClient
	uri       []byte
	t         config.Target
	valueSize int
	timeout   time.Duration
	req       fasthttp.Request
	resp      fasthttp.Response
	body      []byte
}

func newHostClient(t config.Target, maxConns int, timeout time.Duration) *fasthttp.HostClient {
	return &fasthttp.HostClient{
		Addr:                          t.Host,
		MaxConns:                      maxConns,
		ReadTimeout:                   timeout,
		WriteTimeout:                  timeout,
		MaxIdleConnDuration:           time.Minute,
		NoDefaultUserAgentHeader:      true,
		DisableHeaderNamesNormalizing: true,
		DisablePathNormalizing:        true,
	}
}

func (c *hostClientConn) prepare(op api.Method, key uint64) int {
	c.uri = append(append(c.uri[:0], c.t.Path...), "?id="...)
	c.uri = strconv.AppendUint(c.uri, key, 10)
	// Reset: a GET after a PUT must not keep the PUT's Content-Length.
	c.req.Reset()
	c.req.Header.SetHost(c.t.Host)
	c.req.SetRequestURIBytes(c.uri)
	c.req.Header.SetMethod(op.String())
	if op == api.Put {
		c.body = workload.AppendValue(c.body[:0], key, c.valueSize)
		c.req.SetBodyRaw(c.body)
		return c.valueSize
	}
	return 0
}

func (c *hostClientConn) roundTrip() (int, int, error) {
	if err := c.hc.DoTimeout(&c.req, &c.resp, c.timeout); err != nil {
		if err == fasthttp.ErrTimeout {
			err = record.ErrTimeout
		}
		return 0, 0, err
	}
	return c.resp.StatusCode(), len(c.resp.Body()), nil
}
