package record

import (
	"errors"
	"io"
	"net"
	"strconv"
	"syscall"

	"github.com/valyala/fasthttp"
)

// ErrTimeout is the error of a request that exceeded Config.Timeout.
var ErrTimeout = errors.New("request timed out (-timeout)")

// ErrClientTimeout is the error of an attempt whose client gave up
// waiting for it (Config.Client.Timeout) and closed its connection.
var ErrClientTimeout = errors.New("the client gave up waiting (-client-timeout)")

// DescribeError turns a transport error into a short message without
// addresses or ports, so the same failure on 64 connections is counted as
// one kind of error, not 64.
func DescribeError(err error) string {
	var ne net.Error
	var op *net.OpError
	switch {
	case errors.Is(err, ErrTimeout):
		return ErrTimeout.Error()
	case errors.Is(err, ErrClientTimeout):
		return err.Error()
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused (is the server running?)"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by server"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.EPIPE):
		return "connection closed by server"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.As(err, &op):
		return op.Op + ": " + op.Err.Error()
	}
	return err.Error()
}

// statusText is "503 Service Unavailable" for 503.
func statusText(code int) string {
	return strconv.Itoa(code) + " " + fasthttp.StatusMessage(code)
}
