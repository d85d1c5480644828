package engine

import (
	"bytes"
	"errors"
	"fmt"
)

// responseFrame is what the event loop needs of an HTTP/1.x response: its
// status, where it ends, and whether the server closes the connection
// after it. The body itself is not looked at.
type responseFrame struct {
	code       int
	headerLen  int // bytes up to and including the blank line
	bodyLen    int
	closeAfter bool
	retryAfter int // Retry-After in seconds (0: none, or an HTTP date, which the lab's clients do not honour)
}

// errChunked: the event loop frames responses by Content-Length only.
var errChunked = errors.New("chunked response: the fast engine's event loop needs Content-Length (kvserver always sends it)")

var (
	crlfcrlf         = []byte("\r\n\r\n")
	hdrContentLength = []byte("content-length")
	hdrConnection    = []byte("connection")
	hdrTransferEnc   = []byte("transfer-encoding")
	hdrRetryAfter    = []byte("retry-after")
)

// parseResponseHead parses the head of the response at the start of b.
// ok is false while the head is incomplete; err is set when b is not an
// HTTP/1.x response. It allocates nothing.
func parseResponseHead(b []byte) (f responseFrame, ok bool, err error) {
	end := bytes.Index(b, crlfcrlf)
	if end < 0 {
		if len(b) >= 5 && !bytes.HasPrefix(b, []byte("HTTP/")) {
			return f, false, fmt.Errorf("not an HTTP response: %q", b[:5])
		}
		return f, false, nil
	}
	f.headerLen = end + 4
	head := b[:end]
	line, rest, _ := bytes.Cut(head, []byte("\r\n"))
	// "HTTP/1.1 200 OK"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return f, false, fmt.Errorf("malformed status line %q", line)
	}
	http10 := line[7] == '0'
	f.closeAfter = http10
	var valid bool
	if f.code, valid = decimal(line[9:12], 999); !valid {
		return f, false, fmt.Errorf("malformed status line %q", line)
	}
	for len(rest) > 0 {
		var h []byte
		h, rest, _ = bytes.Cut(rest, []byte("\r\n"))
		name, value, found := bytes.Cut(h, []byte(":"))
		if !found {
			continue
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, hdrContentLength):
			if f.bodyLen, valid = decimal(value, 1<<40); !valid {
				return f, false, fmt.Errorf("malformed Content-Length %q", value)
			}
		case bytes.EqualFold(name, hdrConnection):
			if bytes.EqualFold(value, []byte("close")) {
				f.closeAfter = true
			} else if http10 && bytes.EqualFold(value, []byte("keep-alive")) {
				f.closeAfter = false
			}
		case bytes.EqualFold(name, hdrRetryAfter):
			// Delay-seconds; 0 for an HTTP date or a delay over a day.
			f.retryAfter, _ = decimal(value, 86_400)
		case bytes.EqualFold(name, hdrTransferEnc):
			if !bytes.EqualFold(value, []byte("identity")) {
				return f, false, errChunked
			}
		}
	}
	return f, true, nil
}

// decimal is the unsigned decimal number v, or 0 and false where v holds
// anything but digits or its digits run past limit.
func decimal(v []byte, limit int) (int, bool) {
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' || n > limit {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
