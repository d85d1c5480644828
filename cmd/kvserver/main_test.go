package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kvpool/kvpool/internal/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func noEnv(string) string { return "" }

// logLines is kvserver's stderr as a test sees it: it keeps the lines and
// hands over the address of the serving line when it comes.
type logLines struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	serving chan string // the addr of the "msg=serving" line
}

var servingLine = regexp.MustCompile(`msg=serving addr=(\S+)`)

func newLogLines() *logLines { return &logLines{serving: make(chan string, 1)} }

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m := servingLine.FindSubmatch(p); m != nil {
		l.serving <- string(m[1])
	}
	return l.buf.Write(p)
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// errorLines are the lines logged at level ERROR.
func (l *logLines) errorLines() []string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(l.String()), "\n") {
		if strings.Contains(line, "level=ERROR") {
			out = append(out, line)
		}
	}
	return out
}

// TestBadConfigurationExits2: a bad value is one ERROR line naming the
// flag, and exit status 2; nothing is created.
func TestBadConfigurationExits2(t *testing.T) {
	f := func(flag, value, want string) {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "data")
		log := newLogLines()
		code := run([]string{"-data", dir, "-addr", "127.0.0.1:0", flag, value}, noEnv, log, nil)
		assert.Equal(t, 2, code)
		lines := log.errorLines()
		require.Len(t, lines, 1, log.String())
		assert.Contains(t, lines[0], `msg="bad configuration"`)
		assert.Contains(t, lines[0], flag+" "+value)
		assert.Contains(t, lines[0], want)
		assert.NoDirExists(t, dir)
	}
	f("-workers", "-3", "0 (GOMAXPROCS) or more")
	f("-io-concurrency", "-1", "0 (unbounded) or a number of store operations at once")
}

// TestBusyPortCreatesNothing: a start that fails because the port is
// taken exits 1 with one ERROR line, and leaves no data directory behind:
// the address is taken before the store is opened.
func TestBusyPortCreatesNothing(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	dir := filepath.Join(t.TempDir(), "data")
	log := newLogLines()

	code := run([]string{"-data", dir, "-addr", busy.Addr().String()}, noEnv, log, nil)
	assert.Equal(t, 1, code)
	lines := log.errorLines()
	require.Len(t, lines, 1, log.String())
	assert.Contains(t, lines[0], `msg="cannot start"`)
	assert.Contains(t, lines[0], busy.Addr().String())
	assert.NoDirExists(t, dir, "a failed start created the data directory")
}

// TestStoreInUseExits1: a second kvserver on the same data directory
// exits 1, naming the directory, and gives the port back.
func TestStoreInUseExits1(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(store.Options{Dir: dir, CacheBytes: 8 << 20})
	require.NoError(t, err)
	defer st.Close()
	port, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := port.Addr().String()
	require.NoError(t, port.Close())
	log := newLogLines()

	code := run([]string{"-data", dir, "-addr", addr, "-cache-mb", "8"}, noEnv, log, nil)
	assert.Equal(t, 1, code)
	lines := log.errorLines()
	require.Len(t, lines, 1, log.String())
	assert.Contains(t, lines[0], `msg="cannot start"`)
	assert.Contains(t, lines[0], dir)
	again, err := net.Listen("tcp", addr)
	require.NoError(t, err, "the listener was not closed")
	again.Close()
}

// serve runs kvserver with args until the test sends on the returned
// channel, and returns its base URL and where its exit status will come.
func serve(t *testing.T, log *logLines, signals chan os.Signal, args ...string) (string, <-chan int) {
	t.Helper()
	exited := make(chan int, 1)
	args = append([]string{"-addr", "127.0.0.1:0", "-data", t.TempDir(), "-cache-mb", "8"}, args...)
	go func() { exited <- run(args, noEnv, log, signals) }()
	select {
	case addr := <-log.serving:
		return "http://" + addr, exited
	case code := <-exited:
		select {
		case addr := <-log.serving: // it served, then stopped at once
			exited := make(chan int, 1)
			exited <- code
			return "http://" + addr, exited
		default:
		}
		t.Fatalf("kvserver exited %d before serving:\n%s", code, log)
	case <-time.After(30 * time.Second):
		t.Fatalf("kvserver not serving after 30s:\n%s", log)
	}
	return "", nil
}

func waitExit(t *testing.T, exited <-chan int, log *logLines) int {
	t.Helper()
	select {
	case code := <-exited:
		return code
	case <-time.After(30 * time.Second):
		t.Fatalf("kvserver still running 30s after SIGTERM:\n%s", log)
		return -1
	}
}

// TestServeAndStop: kvserver logs the serving line the harness reads,
// with a usable address, says who may read /debug/pprof, answers, and on
// SIGTERM stops cleanly with status 0.
func TestServeAndStop(t *testing.T) {
	log := newLogLines()
	signals := make(chan os.Signal, 2)
	url, exited := serve(t, log, signals)

	req, err := http.NewRequest("PUT", url+"/v0/entity?id=k", strings.NewReader("v"))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 201, resp.StatusCode)
	resp, err = http.Get(url + "/metrics")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Contains(t, string(body), `kvserver_http_requests_total{code="201",method="PUT"} 1`)
	assert.Contains(t, string(body), "kvserver_pebble_", "Pebble's metrics are exported")
	http.DefaultClient.CloseIdleConnections()

	signals <- syscall.SIGTERM
	assert.Equal(t, 0, waitExit(t, exited, log))
	out := log.String()
	assert.Contains(t, out, "loopback clients only")
	assert.Contains(t, out, "stopped cleanly")
	assert.Empty(t, log.errorLines())
}

// TestSignalDuringStart: a signal that arrives before kvserver serves
// (here: before it starts) stops it as soon as it does, cleanly.
func TestSignalDuringStart(t *testing.T) {
	log := newLogLines()
	signals := make(chan os.Signal, 2)
	signals <- syscall.SIGINT
	_, exited := serve(t, log, signals, "-pprof-remote")
	assert.Equal(t, 0, waitExit(t, exited, log))
	assert.Contains(t, log.String(), "served to every client (-pprof-remote)")
	assert.Contains(t, log.String(), "stopped cleanly")
}
