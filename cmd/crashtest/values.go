package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

// keyOf names the seq-th write of one writer in one run and cycle: unique
// across the whole run, so every key is written exactly once.
func keyOf(run string, cycle, writer, seq int) string {
	return fmt.Sprintf("%s-c%02d-w%02d-%08d", run, cycle, writer, seq)
}

// valueOf derives a key's value from the key alone, so any read can be
// checked without remembering what was sent: the key itself (a value that
// landed under another key shows) and its SHA-256 in hex, repeated to a
// length between 64 and 2111 bytes that also depends on the key (a
// truncated value shows).
func valueOf(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	n := 64 + int(binary.BigEndian.Uint16(sum[:2]))%2048
	v := make([]byte, 0, n+len(key)+64)
	v = append(v, key...)
	v = append(v, '=')
	for len(v) < n {
		v = hex.AppendEncode(v, sum[:])
	}
	return v[:n]
}
