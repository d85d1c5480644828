package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvpool/kvpool/internal/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"
)

// The fuzz targets feed bytes to the real server (handler, pool; the store
// is in memory, as Pebble is not what is being fuzzed)
// over an in-process connection whose reads come from the input and then
// EOF, so no input can make the server wait for more: a hang is a bug.
// Invariants checked for every request of every input:
//   - the server does not crash, and answers the whole input within
//     fuzzAnswerBound;
//   - a request answered other than 201/202 changed nothing: the store
//     saw no Put or Delete, and reading its key back gives what it held
//     before; one answered 201/202 made exactly one;
//   - every answer is one the contract allows (a 500 is a finding).
//
// go test -run '^$' -fuzz FuzzRequest -fuzztime 60s -parallel 1 ./internal/server
// go test -run '^$' -fuzz FuzzEntity -fuzztime 60s -parallel 1 ./internal/server

// fuzzAnswerBound is how long one input may take; generous for -race on
// a busy machine, and a hang still shows.
const fuzzAnswerBound = 10 * time.Second

// handlerCodes and errorCodes are the answers the contract allows from the
// handler and from fasthttp's parse-error path (408 cannot occur here:
// reads never block).
var (
	handlerCodes = map[int]bool{200: true, 201: true, 202: true, 400: true, 404: true, 405: true, 503: true}
	errorCodes   = map[int]bool{400: true, 413: true, 431: true}
)

// answer is what one request got, as the handler or ErrorHandler saw it.
type answer struct {
	method string
	code   int
	body   []byte
}

// fuzzServer is one real Server per fuzz process, with small limits so
// inputs reach them, over an in-memory store that counts mutations.
type fuzzServer struct {
	srv   *Server
	store *countingStore
	bound time.Duration  // how long one input may take to be answered
	conns sync.WaitGroup // ServeConn calls, which may outlive a hung input

	mu       sync.Mutex
	answers  []answer
	problems []string
}

// countingStore counts the mutations that reach the store.
type countingStore struct {
	store.Store
	mutations atomic.Int64
}

func (c *countingStore) Put(d int64, k, v []byte) error {
	c.mutations.Add(1)
	return c.Store.Put(d, k, v)
}

func (c *countingStore) Delete(d int64, k []byte) error {
	c.mutations.Add(1)
	return c.Store.Delete(d, k)
}

func newFuzzServer(f testing.TB) *fuzzServer {
	cfg := DefaultConfig()
	cfg.Pool = "fifo"
	cfg.MaxBodyBytes = 4096
	cfg.MaxKeyBytes = 64
	cfg.MaxHeaderBytes = minHeaderBytes(cfg.MaxKeyBytes)
	counting := &countingStore{Store: newMemStore()}
	srv, err := New(resolved(f, cfg), counting, Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Shutdown(context.Background()) })

	fs := &fuzzServer{srv: srv, store: counting, bound: fuzzAnswerBound}
	f.Cleanup(fs.conns.Wait) // before Shutdown: cleanups run last-in first-out
	route, parseError := srv.http.Handler, srv.http.ErrorHandler
	srv.http.Handler = func(ctx *fasthttp.RequestCtx) { fs.check(ctx, route) }
	srv.http.ErrorHandler = func(ctx *fasthttp.RequestCtx, err error) {
		parseError(ctx, err)
		fs.record(ctx, errorCodes)
	}
	return fs
}

// check runs the real handler on ctx and checks the store invariants.
func (fs *fuzzServer) check(ctx *fasthttp.RequestCtx, route fasthttp.RequestHandler) {
	if bytes.HasPrefix(ctx.Path(), []byte(pprofPrefix)) {
		// profile and trace block for ?seconds= by design; not our parser.
		ctx.SetStatusCode(fasthttp.StatusNotFound)
		return
	}
	key := bytes.Clone(ctx.QueryArgs().Peek("id"))
	before, beforeErr := fs.store.Get(0, nil, key)
	mutations := fs.store.mutations.Load()

	route(ctx)

	code := ctx.Response.StatusCode()
	made := fs.store.mutations.Load() - mutations
	switch {
	case code == 201 || code == 202:
		if made != 1 {
			fs.problem("%s %q answered %d made %d mutations, want 1", ctx.Method(), ctx.RequestURI(), code, made)
		}
	case made != 0:
		fs.problem("%s %q answered %d but made %d mutations", ctx.Method(), ctx.RequestURI(), code, made)
	default:
		after, afterErr := fs.store.Get(0, nil, key)
		if !bytes.Equal(before, after) || (beforeErr == nil) != (afterErr == nil) {
			fs.problem("%s %q answered %d but key %q changed: %q (%v) -> %q (%v)",
				ctx.Method(), ctx.RequestURI(), code, key, before, beforeErr, after, afterErr)
		}
	}
	fs.record(ctx, handlerCodes)
}

func (fs *fuzzServer) record(ctx *fasthttp.RequestCtx, allowed map[int]bool) {
	code := ctx.Response.StatusCode()
	if !allowed[code] {
		fs.problem("%s %q answered %d: %q", ctx.Method(), ctx.RequestURI(), code, ctx.Response.Body())
	}
	fs.mu.Lock()
	fs.answers = append(fs.answers, answer{string(ctx.Method()), code, bytes.Clone(ctx.Response.Body())})
	fs.mu.Unlock()
}

func (fs *fuzzServer) problem(format string, args ...any) {
	fs.mu.Lock()
	fs.problems = append(fs.problems, fmt.Sprintf(format, args...))
	fs.mu.Unlock()
}

// serve feeds input to one connection, at most split bytes per read (0:
// all at once), and returns what the handler and ErrorHandler answered and
// every invariant the input broke.
func (fs *fuzzServer) serve(input []byte, split int) (answers []answer, problems []string) {
	fs.mu.Lock()
	fs.answers, fs.problems = nil, nil
	fs.mu.Unlock()
	mutations := fs.store.mutations.Load()

	c := &scriptConn{r: bytes.NewReader(input), split: split}
	done := make(chan struct{})
	fs.conns.Go(func() {
		fs.srv.http.ServeConn(c) // its error is the input's fault, or EOF
		close(done)
	})
	select {
	case <-done:
	case <-time.After(fs.bound):
		return nil, []string{fmt.Sprintf("input not answered within %v", fs.bound)}
	}

	fs.mu.Lock()
	defer fs.mu.Unlock()
	acked := int64(0)
	for _, a := range fs.answers {
		if a.code == 201 || a.code == 202 {
			acked++
		}
	}
	if made := fs.store.mutations.Load() - mutations; made != acked {
		fs.problems = append(fs.problems, fmt.Sprintf("%d mutations for %d requests answered 201/202", made, acked))
	}
	return fs.answers, fs.problems
}

// mustServe is serve for a fuzz function: every problem fails t.
func (fs *fuzzServer) mustServe(t *testing.T, input []byte, split int) []answer {
	t.Helper()
	answers, problems := fs.serve(input, split)
	for _, p := range problems {
		t.Errorf("%s\ninput: %q", p, input)
	}
	return answers
}

// scriptConn is a server-side connection that reads a fixed script, then
// EOF, and swallows what is written. Deadlines never fire: reads never
// block.
type scriptConn struct {
	r     io.Reader
	split int
	out   bytes.Buffer
}

func (c *scriptConn) Read(p []byte) (int, error) {
	if c.split > 0 && len(p) > c.split {
		p = p[:c.split]
	}
	return c.r.Read(p)
}

func (c *scriptConn) Write(p []byte) (int, error) { return c.out.Write(p) }
func (c *scriptConn) Close() error                { return nil }
func (c *scriptConn) LocalAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 19234}
}
func (c *scriptConn) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
}
func (c *scriptConn) SetDeadline(time.Time) error      { return nil }
func (c *scriptConn) SetReadDeadline(time.Time) error  { return nil }
func (c *scriptConn) SetWriteDeadline(time.Time) error { return nil }

// rawSeeds are the contract's cases and the bad input the server refuses, as
// raw bytes on one connection.
func rawSeeds() []string {
	put := func(query, body string) string {
		return fmt.Sprintf("PUT /v0/entity?%s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", query, len(body), body)
	}
	req := func(method, target string) string {
		return method + " " + target + " HTTP/1.1\r\nHost: x\r\n\r\n"
	}
	chunked := func(query string, chunks ...string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "PUT /v0/entity?%s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", query)
		for _, c := range chunks {
			fmt.Fprintf(&b, "%x\r\n%s\r\n", len(c), c)
		}
		return b.String() + "0\r\n\r\n"
	}
	seeds := []string{
		// The contract.
		put("id=k", "v") + req("GET", "/v0/entity?id=k") + req("DELETE", "/v0/entity?id=k") + req("GET", "/v0/entity?id=k"),
		put("id=empty", ""),
		req("GET", "/v0/entity"), req("GET", "/v0/entity?id="), req("DELETE", "/v0/entity?id="),
		req("POST", "/v0/entity?id=k"), req("PATCH", "/v0/entity?id=k"), req("HEAD", "/v0/entity?id=k"),
		req("GET", "/abracadabra"), req("GET", "/v0/status"), req("GET", "/metrics"),
		req("GET", "/debug/pprof/profile?seconds=30"),
		// Odd and lowercase methods.
		"put /v0/entity?id=k HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nv",
		req("get", "/v0/entity?id=k"), req("Delete", "/v0/entity?id=k"), req("M-SEARCH", "/v0/entity?id=k"),
		req("", "/v0/entity?id=k"), req("GET\x00", "/v0/entity?id=k"),
		// Repeated and encoded id parameters.
		put("id=a&id=b", "v"), put("id=a&id=", "v"), put("id=&id=a", "v"), put("ID=a", "v"), put("id", "v"),
		put("id=a%2Bb", "v"), put("id=a+b", "v"), put("id=%zz", "v"), put("id=%", "v"), put("id=%00%ff%fe", "v"),
		put("id%3Da=b", "v"), put("x=1&id=k&y=2", "v"), put("id=k#frag", "v"), put("id=k;a=b", "v"),
		put("id="+strings.Repeat("k", 64), "at the key limit"), put("id="+strings.Repeat("k", 65), "over it"),
		put("id="+strings.Repeat("%ff", 64), "encoded at the limit"),
		// Non-UTF-8 keys and control bytes, raw in the request line.
		put("id=\xff\xfe\x80", "v"), put("id=\x01\x7f", "v"), put("id=ключ", "v"),
		// Huge headers, and headers a parser may trip on.
		"GET /v0/entity?id=k HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("b", 2000) + "\r\n\r\n",
		"GET /v0/entity?id=" + strings.Repeat("k", 2000) + " HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /v0/entity?id=k HTTP/1.1\r\n\r\n", // no Host
		"GET /v0/entity?id=k HTTP/1.0\r\n\r\n",
		"GET /v0/entity?id=k HTTP/2.0\r\nHost: x\r\n\r\n",
		"GET http://x/v0/entity?id=k HTTP/1.1\r\nHost: y\r\n\r\n",
		"GET /v0/entity?id=k HTTP/1.1\r\nHost: x\r\nBad Header: v\r\n\r\n",
		"GET /v0/entity?id=k HTTP/1.1\nHost: x\n\n",
		"GET /v0/../v0/entity?id=k HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /v0/%65ntity?id=k HTTP/1.1\r\nHost: x\r\n\r\n",
		// Truncated bodies and lying lengths.
		"PUT /v0/entity?id=trunc HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc",
		"PUT /v0/entity?id=neg HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\nabc",
		"PUT /v0/entity?id=two HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
		"PUT /v0/entity?id=huge HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n",
		"PUT /v0/entity?id=over HTTP/1.1\r\nHost: x\r\nContent-Length: 4097\r\n\r\n" + strings.Repeat("o", 4097),
		"PUT /v0/entity?id=smuggle HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"PUT /v0/entity?id=expect HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5000\r\n\r\n",
		"PUT /v0/entity?id=expect HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nok",
		// Chunked bodies: within the limit, over it, broken.
		chunked("id=ch", "ab", "cd"),
		chunked("id=chover", strings.Repeat("x", 3000), strings.Repeat("y", 3000)),
		"PUT /v0/entity?id=chhuge HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffff\r\n",
		"PUT /v0/entity?id=chbad HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n",
		"PUT /v0/entity?id=chtrunc HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
		"PUT /v0/entity?id=chext HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2;ext=1\r\nab\r\n0\r\nTrailer: t\r\n\r\n",
		// Nothing, and garbage.
		"", "\r\n\r\n", "\x00\x01\x02", "GET",
	}
	// Request smuggling: every ambiguous framing, each hiding a second
	// request, which must never be stored.
	for _, name := range slices.Sorted(maps.Keys(smugglingShapes)) {
		seeds = append(seeds, smugglingShapes[name])
	}
	return seeds
}

// FuzzRequest feeds raw bytes, any number of requests, to one connection.
func FuzzRequest(f *testing.F) {
	for i, s := range rawSeeds() {
		f.Add([]byte(s), uint8(i%3*7)) // whole, and in 7- and 14-byte reads
	}
	fs := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, input []byte, split uint8) {
		fs.mustServe(t, input, int(split))
	})
}

// FuzzEntity builds one well-framed PUT or DELETE from fuzzed parts, then
// a GET of the same query, and checks the round trip: after 201 the GET
// returns exactly the body, after 202 it is 404.
func FuzzEntity(f *testing.F) {
	f.Add("PUT", "id=k", []byte("v"), uint16(0))
	f.Add("PUT", "id=k", []byte("hello world"), uint16(3))
	f.Add("PUT", "id=%00%ff", []byte{0, 1, 2, 255}, uint16(0))
	f.Add("PUT", "id=a%2Bb&x=y", []byte(""), uint16(0))
	f.Add("PUT", "id=a&id=b", []byte("v"), uint16(0))
	f.Add("PUT", "id=big", bytes.Repeat([]byte("b"), 4096), uint16(1000))
	f.Add("PUT", "id=over", bytes.Repeat([]byte("o"), 4097), uint16(4097))
	f.Add("DELETE", "id=k", []byte(nil), uint16(0))
	f.Add("put", "id=k", []byte("v"), uint16(0))
	f.Add("POST", "id=k", []byte("v"), uint16(0))
	fs := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, method, query string, body []byte, chunk uint16) {
		var b bytes.Buffer
		fmt.Fprintf(&b, "%s /v0/entity?%s HTTP/1.1\r\nHost: x\r\n", method, query)
		if chunk == 0 {
			fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
		} else {
			b.WriteString("Transfer-Encoding: chunked\r\n\r\n")
			for rest := body; len(rest) > 0; {
				n := min(int(chunk), len(rest))
				fmt.Fprintf(&b, "%x\r\n%s\r\n", n, rest[:n])
				rest = rest[n:]
			}
			b.WriteString("0\r\n\r\n")
		}
		fmt.Fprintf(&b, "GET /v0/entity?%s HTTP/1.1\r\nHost: x\r\n\r\n", query)

		answers := fs.mustServe(t, b.Bytes(), 0)
		if !plainToken(method) || !plainToken(query) || len(answers) != 2 {
			return // the framing itself was fuzzed: only the invariants apply
		}
		put, get := answers[0], answers[1]
		switch {
		case put.code == 201 && (get.code != 200 || !bytes.Equal(get.body, body)):
			t.Errorf("%s ?%s answered 201, then GET answered %d %q, want 200 %q", method, query, get.code, trim(get.body), trim(body))
		case put.code == 202 && get.code != 404:
			t.Errorf("%s ?%s answered 202, then GET answered %d, want 404", method, query, get.code)
		}
	})
}

// plainToken reports whether s can sit in a request line without changing
// its framing: no spaces, controls, '#' or bytes outside ASCII.
func plainToken(s string) bool {
	for i := range len(s) {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '#' {
			return false
		}
	}
	return s != ""
}

// TestFuzzHarness: the invariants the fuzz targets rely on do fail: a
// handler that stores for a request it rejects, one that answers 500, and
// one that does not answer in time are all reported.
func TestFuzzHarness(t *testing.T) {
	fs := newFuzzServer(t)
	put := []byte("PUT /v0/entity?id=k HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nv")

	answers, problems := fs.serve(put, 0)
	require.Empty(t, problems)
	require.Len(t, answers, 1)
	assert.Equal(t, 201, answers[0].code)

	f := func(broken fasthttp.RequestHandler, want string) {
		t.Helper()
		fs.srv.http.Handler = func(ctx *fasthttp.RequestCtx) { fs.check(ctx, broken) }
		_, problems := fs.serve(put, 0)
		assert.NotEmpty(t, problems, want)
		if len(problems) > 0 {
			assert.Contains(t, problems[0], want)
		}
	}
	f(func(ctx *fasthttp.RequestCtx) {
		fs.store.Put(0, []byte("k"), []byte("stored anyway"))
		ctx.SetStatusCode(400)
	}, "answered 400 but made 1 mutations")
	f(func(ctx *fasthttp.RequestCtx) {
		fs.store.Store.Delete(0, []byte("k")) // behind the counter's back
		ctx.SetStatusCode(400)
	}, "changed")
	f(func(ctx *fasthttp.RequestCtx) { ctx.SetStatusCode(500) }, "answered 500")
	fs.bound = 50 * time.Millisecond
	f(func(*fasthttp.RequestCtx) { time.Sleep(300 * time.Millisecond) }, "not answered within")
}

// TestSmugglingSeeds: through the fuzz harness's in-process connection,
// read whole or a few bytes at a time, no smuggling shape gets a 2xx for
// itself or for the request hidden behind it.
func TestSmugglingSeeds(t *testing.T) {
	fs := newFuzzServer(t)
	for name, raw := range smugglingShapes {
		for _, split := range []int{0, 1, 7} {
			answers := fs.mustServe(t, []byte(raw), split)
			for _, a := range answers {
				assert.False(t, a.code >= 200 && a.code < 300, "%s (split %d): answered %d", name, split, a.code)
			}
		}
	}
	assert.Zero(t, fs.store.mutations.Load(), "nothing stored")
}
