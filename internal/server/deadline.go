package server

import (
	"strconv"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/mono"
	"github.com/valyala/fasthttp"
)

// timeoutHeaderLower is api.HeaderRequestTimeout as scanHeaders compares
// header names: lower case.
var timeoutHeaderLower = strings.ToLower(api.HeaderRequestTimeout)

// maxTimeoutDigits is how many digits the largest deadline header has.
var maxTimeoutDigits = len(strconv.Itoa(api.MaxRequestTimeoutMs))

// badTimeout is the 400's message for a deadline header kvserver cannot
// read.
var badTimeout = api.HeaderRequestTimeout + " must be given once, as whole milliseconds from 1 to " +
	strconv.Itoa(api.MaxRequestTimeoutMs) + " (the time the client will still wait)"

// parseTimeoutMs reads a deadline header's value: 1 to 8 ASCII digits,
// not 0. It does not allocate.
func parseTimeoutMs(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > maxTimeoutDigits {
		return 0, false
	}
	var ms int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		ms = 10*ms + int64(c-'0')
	}
	return ms, ms > 0
}

// requestDeadline is the deadline of a request that said it will wait ms
// more milliseconds, on the mono clock: counted from when fasthttp began
// serving it, once it had been read (from now for a request that no
// fasthttp server read, as in tests).
func requestDeadline(ctx *fasthttp.RequestCtx, ms int64) int64 {
	left := ms * int64(time.Millisecond)
	if t := ctx.Time(); !t.IsZero() {
		return mono.Of(t) + left
	}
	return mono.Now() + left
}
