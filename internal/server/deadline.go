package server

import (
	"strconv"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/mono"
	"github.com/valyala/fasthttp"
)

// The deadline and retry headers' names as scanHeaders compares header
// names: lower case.
var (
	timeoutHeaderLower    = strings.ToLower(api.HeaderRequestTimeout)
	envoyTimeoutLower     = strings.ToLower(api.HeaderEnvoyTimeout)
	grpcTimeoutLower      = strings.ToLower(api.HeaderGRPCTimeout)
	attemptCountLower     = strings.ToLower(api.HeaderAttemptCount)
	previousAttemptsLower = strings.ToLower(api.HeaderPreviousAttempts)
)

// maxTimeoutDigits is how many digits the largest deadline header has.
var maxTimeoutDigits = len(strconv.Itoa(api.MaxRequestTimeoutMs))

// The 400s' messages for a deadline or retry header kvserver cannot read.
var (
	badTimeout = api.HeaderRequestTimeout + " must be given once, as whole milliseconds from 1 to " +
		strconv.Itoa(api.MaxRequestTimeoutMs) + " (the time the client will still wait)"
	badEnvoyTimeout = api.HeaderEnvoyTimeout + " must be given once, as whole milliseconds from 1 to " +
		strconv.Itoa(api.MaxRequestTimeoutMs)
	badGRPCTimeout = api.HeaderGRPCTimeout + " must be given once, as 1 to 8 digits and a unit (H, M, S, m, u or n), not 0"
	badAttempts    = api.HeaderAttemptCount + " must be given once, as a whole number from 1 (a first try)"
	badPrevious    = api.HeaderPreviousAttempts + " must be given once, as a whole number from 0 (a first try)"
)

// clientWait is how long the client says it will still wait, from the
// first of its deadline headers to run out (0: it sent none), or the
// 400's message for one that is malformed or repeated.
func (h *headerFacts) clientWait() (time.Duration, string) {
	var wait time.Duration
	shortest := func(d time.Duration) {
		if wait == 0 || d < wait {
			wait = d
		}
	}
	if h.timeouts > 0 {
		ms, ok := parseTimeoutMs(h.timeout)
		if !ok || h.timeouts > 1 {
			return 0, badTimeout
		}
		shortest(time.Duration(ms) * time.Millisecond)
	}
	if h.envoyTimeouts > 0 {
		ms, ok := parseTimeoutMs(h.envoyTimeout)
		if !ok || h.envoyTimeouts > 1 {
			return 0, badEnvoyTimeout
		}
		shortest(time.Duration(ms) * time.Millisecond)
	}
	if h.grpcTimeouts > 0 {
		d, ok := parseGRPCTimeout(h.grpcTimeout)
		if !ok || h.grpcTimeouts > 1 {
			return 0, badGRPCTimeout
		}
		shortest(d)
	}
	return wait, ""
}

// retry tells whether the request says it is a retry (an attempt count
// above 1, or previous attempts above 0), or the 400's message for a mark
// that is malformed or repeated.
func (h *headerFacts) retry() (bool, string) {
	var retry bool
	if h.attemptsN > 0 {
		n, ok := parseCount(h.attempts)
		if !ok || n < 1 || h.attemptsN > 1 {
			return false, badAttempts
		}
		retry = n > 1
	}
	if h.previousN > 0 {
		n, ok := parseCount(h.previous)
		if !ok || h.previousN > 1 {
			return false, badPrevious
		}
		retry = retry || n > 0
	}
	return retry, ""
}

// parseCount reads a whole number of 1 to 8 ASCII digits. It does not
// allocate.
func parseCount(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > maxTimeoutDigits {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = 10*n + int64(c-'0')
	}
	return n, true
}

// parseGRPCTimeout reads gRPC's timeout header (TimeoutValue
// TimeoutUnit: 1 to 8 digits, then H, M, S, m, u or n), not 0. It does
// not allocate.
func parseGRPCTimeout(v []byte) (time.Duration, bool) {
	if len(v) < 2 {
		return 0, false
	}
	n, ok := parseCount(v[:len(v)-1])
	if !ok || n == 0 {
		return 0, false
	}
	var unit time.Duration
	switch v[len(v)-1] {
	case 'H':
		unit = time.Hour
	case 'M':
		unit = time.Minute
	case 'S':
		unit = time.Second
	case 'm':
		unit = time.Millisecond
	case 'u':
		unit = time.Microsecond
	case 'n':
		unit = time.Nanosecond
	default:
		return 0, false
	}
	return time.Duration(n) * unit, true
}

// parseTimeoutMs reads a deadline header's value: 1 to 8 ASCII digits,
// not 0. It does not allocate.
func parseTimeoutMs(v []byte) (int64, bool) {
	ms, ok := parseCount(v)
	return ms, ok && ms > 0
}

// requestDeadline is the deadline of a request that said it will wait
// wait more, on the mono clock: counted from when fasthttp began serving
// it, once it had been read (from now for a request that no fasthttp
// server read, as in tests).
func requestDeadline(ctx *fasthttp.RequestCtx, wait time.Duration) int64 {
	left := int64(wait)
	if t := ctx.Time(); !t.IsZero() {
		return mono.Of(t) + left
	}
	return mono.Now() + left
}
