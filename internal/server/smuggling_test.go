package server

import (
	"bufio"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"
)

// smugglingShapes are requests whose body framing two parsers may read
// differently. Each PUTs key "smuggle" and, if the framing were read as
// Content-Length, hides a second request (a PUT of key "hidden") in what
// a chunked reader takes as its body, or the other way round.
var smugglingShapes = map[string]string{
	"content-length then chunked": "PUT /v0/entity?id=smuggle HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"0\r\n\r\n" + hiddenPut,
	"chunked then content-length": "PUT /v0/entity?id=smuggle HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 60\r\n\r\n" +
		"0\r\n\r\n" + hiddenPut,
	"content-lengths disagree": "PUT /v0/entity?id=smuggle HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 60\r\n\r\n" +
		"v" + hiddenPut,
	"content-lengths agree": "PUT /v0/entity?id=smuggle HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n" +
		"v" + hiddenPut,
	"transfer-encoding identity": "PUT /v0/entity?id=smuggle HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\nContent-Length: 1\r\n\r\n" +
		"v" + hiddenPut,
	"transfer-encoding identity alone": "PUT /v0/entity?id=smuggle HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n\r\n" +
		hiddenPut,
	"transfer-encoding list": "PUT /v0/entity?id=smuggle HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n" +
		"0\r\n\r\n" + hiddenPut,
	"transfer-encoding twice": "PUT /v0/entity?id=smuggle HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"0\r\n\r\n" + hiddenPut,
	"both, with Expect: 100-continue": "PUT /v0/entity?id=smuggle HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"0\r\n\r\n" + hiddenPut,
}

const hiddenPut = "PUT /v0/entity?id=hidden HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nh"

// TestSmugglingRefused: every ambiguous framing is answered 400 and the
// connection closed, over a real TCP connection; nothing is stored, the
// request's own key nor the one hidden behind it.
func TestSmugglingRefused(t *testing.T) {
	ts := start(t, testConfig(t, "fifo"))
	for name, raw := range smugglingShapes {
		t.Run(name, func(t *testing.T) {
			c := ts.dial()
			c.t = t // fail this shape, not the whole test
			c.send(raw)
			got := c.closedByServer(5 * time.Second)
			assert.Equal(t, 400, statusOf(got), "%q", got)
			assert.Equal(t, 1, strings.Count(string(got), "HTTP/1.1 "), "one answer, then the close: %q", got)
			for _, key := range []string{"smuggle", "hidden"} {
				code, _, _ := ts.do("GET", entity(key), nil)
				assert.Equal(t, 404, code, "%s stored", key)
			}
		})
	}

	// Plain chunked, in any letter case, is still served.
	c := ts.dial()
	resp, _ := c.roundTrip("PUT /v0/entity?id=chunked HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n1\r\nv\r\n0\r\n\r\n")
	assert.Equal(t, 201, resp.StatusCode)
	assert.Equal(t, 1.0, ts.requests("PUT", 201))
	refused := ts.requests("PUT", 400) + ts.requests("unknown", 400)
	assert.Equal(t, float64(len(smugglingShapes)), refused, "each refusal counted once, under PUT where the headers were read")
	assert.Zero(t, ts.requests("GET", 400))
}

func TestFramingProblem(t *testing.T) {
	f := func(headers, want string) {
		t.Helper()
		var req fasthttp.Request
		raw := "PUT /v0/entity?id=k HTTP/1.1\r\nHost: x\r\n" + headers + "\r\n"
		err := req.Header.Read(bufio.NewReader(strings.NewReader(raw)))
		require.NoError(t, err, "%q", raw)
		assert.Equal(t, want, framingProblem(&req.Header), "%q", headers)
	}
	f("", "")
	f("Content-Length: 5\r\n", "")
	f("Transfer-Encoding: chunked\r\n", "")
	f("transfer-encoding:   CHUNKED  \r\n", "")
	f("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "both Content-Length and Transfer-Encoding")
	f("Transfer-Encoding: chunked\r\ncontent-length: 5\r\n", "both Content-Length and Transfer-Encoding")
	f("Transfer-Encoding: identity\r\n", "Transfer-Encoding other than chunked")
	f("X-Transfer-Encoding: gzip\r\nX-Content-Length: 1\r\n", "")
}
