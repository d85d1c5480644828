package server

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// metricValue is the value of the series line (name and labels exactly as
// /metrics prints them) in a /metrics body, or 0 if it is not there.
func metricValue(t *testing.T, body, series string) float64 {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err, series)
			return f
		}
	}
	return 0
}

func requestsSeries(method string, code int) string {
	return fmt.Sprintf(`kvserver_http_requests_total{code="%d",method="%s"}`, code, method)
}

// requests reads kvserver_http_requests_total{method,code} from /metrics.
func (ts *testServer) requests(method string, code int) float64 {
	ts.t.Helper()
	status, body, _ := ts.do("GET", "/metrics", nil)
	require.Equal(ts.t, 200, status)
	return metricValue(ts.t, string(body), requestsSeries(method, code))
}

// TestConnectionAnswersCounted: answers given outside the handler are
// counted in kvserver_http_requests_total under the method the request
// line named if its headers were read, else under method="unknown";
// never under the GET that fasthttp reports for a request it never read.
func TestConnectionAnswersCounted(t *testing.T) {
	wait := 5 * time.Second
	t.Run("408 nothing sent", func(t *testing.T) {
		cfg := testConfig(t, "fifo")
		cfg.ReadTimeout = 200 * time.Millisecond
		ts := start(t, cfg)
		got := ts.dial().closedByServer(wait)
		if len(got) > 0 { // fasthttp answers unless the read found nothing at all
			assert.Equal(t, 408, statusOf(got), "%q", got)
		}
		assert.Equal(t, 1.0, ts.requests("unknown", 408))
		assert.Zero(t, ts.requests("GET", 408))
	})
	t.Run("408 headers cut off", func(t *testing.T) {
		cfg := testConfig(t, "fifo")
		cfg.ReadTimeout = 200 * time.Millisecond
		ts := start(t, cfg)
		c := ts.dial()
		c.send("PUT " + entity("k") + " HTTP/1.1\r\nHost: x\r\n") // no blank line: the headers never end
		assert.Equal(t, 408, statusOf(c.closedByServer(wait)))
		assert.Equal(t, 1.0, ts.requests("unknown", 408))
		assert.Zero(t, ts.requests("GET", 408)+ts.requests("PUT", 408))
	})
	t.Run("408 body cut off", func(t *testing.T) {
		cfg := testConfig(t, "fifo")
		cfg.ReadTimeout = 200 * time.Millisecond
		ts := start(t, cfg)
		c := ts.dial()
		c.send("PUT " + entity("k") + " HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
		assert.Equal(t, 408, statusOf(c.closedByServer(wait)))
		assert.Equal(t, 1.0, ts.requests("PUT", 408))
		assert.Zero(t, ts.requests("GET", 408)+ts.requests("unknown", 408))
	})
	t.Run("413", func(t *testing.T) {
		ts := start(t, limitConfig(t))
		c := ts.dial()
		resp, _ := c.roundTrip("PUT " + entity("k") + " HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\n\r\n")
		assert.Equal(t, 413, resp.StatusCode)
		assert.Equal(t, 1.0, ts.requests("PUT", 413))

		c = ts.dial()
		resp, _ = c.roundTrip("PUT " + entity("k") + " HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 1001\r\n\r\n")
		assert.Equal(t, 413, resp.StatusCode)
		assert.Equal(t, 2.0, ts.requests("PUT", 413), "refused before the body, on Expect: 100-continue")
		assert.Zero(t, ts.requests("GET", 413)+ts.requests("unknown", 413))
	})
	t.Run("431", func(t *testing.T) {
		ts := start(t, testConfig(t, "fifo"))
		c := ts.dial()
		resp, _ := c.roundTrip("PUT " + entity("k") + " HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("b", ts.cfg.MaxHeaderBytes) + "\r\n\r\n")
		assert.Equal(t, 431, resp.StatusCode)
		assert.Equal(t, 1.0, ts.requests("unknown", 431))
		assert.Zero(t, ts.requests("GET", 431)+ts.requests("PUT", 431))
	})
	t.Run("429", func(t *testing.T) {
		cfg := testConfig(t, "fifo")
		cfg.MaxConnsPerIP = 1
		ts := start(t, cfg)
		first := ts.holdServed(1)[0]
		assert.Equal(t, 429, statusOf(ts.dial().closedByServer(wait)))
		// The scrape must come over the one connection this address may hold.
		_, body := first.roundTrip("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
		assert.Equal(t, 1.0, metricValue(t, string(body), requestsSeries("unknown", 429)))
	})
	t.Run("503 over -max-conns", func(t *testing.T) {
		cfg := testConfig(t, "fifo")
		cfg.MaxConns = 2
		ts := start(t, cfg)
		held := ts.holdServed(2)
		assert.Equal(t, 503, statusOf(ts.dial().closedByServer(wait)))
		assert.Equal(t, 503, statusOf(ts.dial().closedByServer(wait)))
		_, body := held[0].roundTrip("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
		assert.Equal(t, 2.0, metricValue(t, string(body), requestsSeries("unknown", 503)))
		_, body = held[1].roundTrip("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
		assert.Equal(t, 2.0, metricValue(t, string(body), requestsSeries("unknown", 503)), "a second scrape counts nothing twice")
	})
}
