package server

import (
	"bytes"

	"github.com/valyala/fasthttp"
)

// headerFacts is what kvserver reads from a request's raw header block, in
// one pass over it: a problem with its framing, the headers that carry
// the client's deadline (see deadline.go) and those that mark a retry.
type headerFacts struct {
	problem string // why the body framing is ambiguous, or ""
	// timeout, envoyTimeout, grpcTimeout: the deadline headers' values,
	// spaces trimmed (nil if absent), and how many of each there were.
	timeout, envoyTimeout, grpcTimeout    []byte
	timeouts, envoyTimeouts, grpcTimeouts int
	// attempts, previous: the retry marks' values, and their counts.
	attempts, previous   []byte
	attemptsN, previousN int
}

// framingProblem reports why a request's body framing is ambiguous, or ""
// if it is not (see scanHeaders).
func framingProblem(h *fasthttp.RequestHeader) string { return scanHeaders(h).problem }

// scanHeaders reads h's raw header block once for what headerFacts holds.
// The deadline header is found in the pass the framing check makes
// anyway, so a request without it pays one length comparison per header
// line for it, and nothing allocates.
//
// The framing problem says why the body framing is ambiguous, if it is.
// Two parsers that disagree on where a body ends disagree on where the
// next request begins: behind a proxy that picks the other
// reading, that is request smuggling. RFC 9112 §6.1 lets a server refuse
// such a request and advises closing the connection after answering,
// since what follows on it cannot be trusted. The shapes refused:
//   - both Content-Length and Transfer-Encoding (fasthttp v1.74 reads
//     the chunked body and ignores Content-Length);
//   - more than one Content-Length or Transfer-Encoding header (fasthttp
//     already refuses these while parsing; checked again in case a later
//     version merges agreeing ones);
//   - a Transfer-Encoding other than chunked (fasthttp accepts identity,
//     which RFC 9112 no longer defines, and drops the header).
//
// Transfer-coding names are case-insensitive (RFC 9112 §7), so "Chunked"
// is chunked. It reads the raw header block fasthttp keeps, since the
// parsed header no longer shows a Content-Length that Transfer-Encoding
// overrode, nor an identity coding; it does not allocate.
func scanHeaders(h *fasthttp.RequestHeader) headerFacts {
	var facts headerFacts
	raw := h.RawHeaders()
	lengths, encodings := 0, 0
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		name, value, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue
		}
		switch {
		case asciiEqualFold(name, "content-length"):
			lengths++
		case asciiEqualFold(name, "transfer-encoding"):
			encodings++
			if !asciiEqualFold(bytes.Trim(value, " \t\r"), "chunked") && facts.problem == "" {
				facts.problem = "Transfer-Encoding other than chunked"
			}
		case asciiEqualFold(name, timeoutHeaderLower):
			facts.timeouts++
			facts.timeout = bytes.Trim(value, " \t\r")
		case asciiEqualFold(name, envoyTimeoutLower):
			facts.envoyTimeouts++
			facts.envoyTimeout = bytes.Trim(value, " \t\r")
		case asciiEqualFold(name, grpcTimeoutLower):
			facts.grpcTimeouts++
			facts.grpcTimeout = bytes.Trim(value, " \t\r")
		case asciiEqualFold(name, attemptCountLower):
			facts.attemptsN++
			facts.attempts = bytes.Trim(value, " \t\r")
		case asciiEqualFold(name, previousAttemptsLower):
			facts.previousN++
			facts.previous = bytes.Trim(value, " \t\r")
		}
	}
	switch {
	case facts.problem != "":
	case lengths > 0 && encodings > 0:
		facts.problem = "both Content-Length and Transfer-Encoding"
	case lengths > 1:
		facts.problem = "more than one Content-Length"
	case encodings > 1:
		facts.problem = "more than one Transfer-Encoding"
	}
	return facts
}

// asciiEqualFold is bytes.EqualFold for an ASCII lower-case want, without
// Unicode folding: "K" (Kelvin sign) must not match "k".
func asciiEqualFold(b []byte, want string) bool {
	if len(b) != len(want) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != want[i] {
			return false
		}
	}
	return true
}
