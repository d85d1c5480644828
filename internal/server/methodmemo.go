package server

import (
	"sync/atomic"
	"unsafe"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/valyala/fasthttp"
)

// methodMemo remembers the method of each request whose headers were
// read, until the request is answered, so that a request cut off in its
// body is counted under its method. fasthttp (v1.74) resets the whole
// request when reading its body fails (a read timeout, a chunked body
// over the limit, a broken chunk) before it calls the ErrorHandler, so
// the request no longer says its method there.
//
// The memo is keyed by the address of the request's header, which
// fasthttp keeps for the life of a connection: hashed into a fixed table
// of words, each holding the address with the method in its low bits
// (a header is word-aligned, so they are free). Two connections whose
// headers share a slot overwrite each other: the loser's method then
// reads as unknown, never as another request's. The address is only
// compared, never followed, so the garbage collector need not see it.
type methodMemo struct {
	slots [1024]atomic.Uintptr
}

const methodBits = 7 // api.NumMethods fits below a word-aligned address

func headerAddr(h *fasthttp.RequestHeader) uintptr { return uintptr(unsafe.Pointer(h)) }

func (m *methodMemo) slot(p uintptr) *atomic.Uintptr {
	return &m.slots[(p>>6)%uintptr(len(m.slots))]
}

// headerReceived is fasthttp's HeaderReceived hook: the headers of a
// request have been read, its body not yet.
func (m *methodMemo) headerReceived(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	p := headerAddr(h)
	m.slot(p).Store(p | uintptr(api.ParseMethod(h.Method())))
	return fasthttp.RequestConfig{} // the server's own limits and timeouts
}

// take returns the method remembered for h, if any, and forgets it: each
// request is answered once.
func (m *methodMemo) take(h *fasthttp.RequestHeader) (api.Method, bool) {
	p := headerAddr(h)
	s := m.slot(p)
	v := s.Load()
	if v&^methodBits != p {
		return 0, false
	}
	s.CompareAndSwap(v, 0)
	return api.Method(v & methodBits), true
}
