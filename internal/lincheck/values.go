package lincheck

import (
	"bytes"
	"strconv"
)

// valuePrefix starts every value a Runner writes.
const valuePrefix = "lincheck-"

// valueOf is the body of the PUT numbered id: "lincheck-<id>;" repeated
// and cut to size bytes (never shorter than one copy). A value names its
// PUT, and any other body (truncated, two values mixed) is no value.
func valueOf(id int64, size int) []byte {
	head := strconv.AppendInt([]byte(valuePrefix), id, 10)
	head = append(head, ';')
	v := make([]byte, max(size, len(head)))
	for i := 0; i < len(v); i += copy(v[i:], head) {
	}
	return v
}

// valueID is the number of the PUT whose value body is, given the size
// values were written at; Corrupt if body is no such value.
func valueID(body []byte, size int) int64 {
	rest, ok := bytes.CutPrefix(body, []byte(valuePrefix))
	end := bytes.IndexByte(rest, ';')
	if !ok || end <= 0 {
		return Corrupt
	}
	id, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	var canon [20]byte
	if err != nil || id <= 0 || !bytes.Equal(strconv.AppendInt(canon[:0], id, 10), rest[:end]) {
		return Corrupt // "+7" or "07" is not how valueOf writes 7
	}
	head := body[:len(valuePrefix)+end+1]
	if len(body) != max(size, len(head)) {
		return Corrupt
	}
	for i := len(head); i < len(body); i += len(head) {
		if !bytes.Equal(body[i:min(i+len(head), len(body))], head[:min(len(head), len(body)-i)]) {
			return Corrupt
		}
	}
	return id
}
