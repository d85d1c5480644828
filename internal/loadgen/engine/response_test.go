package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseResponseHead(t *testing.T) {
	f := func(in string, want responseFrame) {
		t.Helper()
		got, ok, err := parseResponseHead([]byte(in))
		require.NoError(t, err, in)
		require.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	f("HTTP/1.1 200 OK\r\nServer: bare\r\nContent-Length: 4\r\n\r\nbare", responseFrame{code: 200, headerLen: 52, bodyLen: 4})
	f("HTTP/1.1 201 Created\r\ncontent-length:0\r\n\r\n", responseFrame{code: 201, headerLen: 42})
	f("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 3\r\n\r\nbye", responseFrame{code: 503, headerLen: 74, bodyLen: 3, closeAfter: true})
	f("HTTP/1.0 404 Not Found\r\n\r\n", responseFrame{code: 404, headerLen: 26, closeAfter: true})
	f("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", responseFrame{code: 200, headerLen: 62, bodyLen: 2})

	incomplete := func(in string) {
		t.Helper()
		_, ok, err := parseResponseHead([]byte(in))
		assert.NoError(t, err, in)
		assert.False(t, ok, in)
	}
	incomplete("")
	incomplete("HTTP/1.1 2")
	incomplete("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n")

	bad := func(in string) {
		t.Helper()
		_, _, err := parseResponseHead([]byte(in))
		assert.Error(t, err, in)
	}
	bad("SSH-2.0-OpenSSH\r\n")
	bad("HTTP/1.1 2x0 OK\r\n\r\n")
	bad("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n")
	_, _, err := parseResponseHead([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"))
	assert.ErrorIs(t, err, errChunked)
}
