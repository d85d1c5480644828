package harness

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWaitReady: it returns once /v0/status answers 200, and when ctx
// ends first it says what the last probe got.
func TestWaitReady(t *testing.T) {
	var probes atomic.Int32
	ready := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v0/status" || probes.Add(1) < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer ready.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, WaitReady(ctx, ready.URL))
	assert.Equal(t, int32(3), probes.Load(), "ready at the third probe, not before")

	never := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer never.Close()
	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := WaitReady(ctx, never.URL)
	assert.ErrorContains(t, err, "503 Service Unavailable")
}

// TestParseStatCPU: utime+stime in USER_HZ ticks, counted from the last
// ')' so that a command name with spaces and parentheses parses.
func TestParseStatCPU(t *testing.T) {
	f := func(stat string, want time.Duration) {
		t.Helper()
		got, err := parseStatCPU(stat)
		require.NoError(t, err, stat)
		assert.Equal(t, want, got, stat)
	}
	// Fields 14 (utime) and 15 (stime) are 150 and 25 ticks.
	rest := "S 1 2 3 4 5 6 7 8 9 10 150 25 0 0 20 0 8 0 100 1000000 250"
	f("4242 (kvserver) "+rest, 1750*time.Millisecond)
	f("4242 (a b) (c)) "+rest, 1750*time.Millisecond)

	for _, bad := range []string{"", "4242 kvserver S 1", "4242 (kvserver) S 1 2 3", "4242 (kvserver) S 1 2 3 4 5 6 7 8 9 10 x 25"} {
		_, err := parseStatCPU(bad)
		assert.Error(t, err, "%q", bad)
	}
}

func TestParseStatmRSS(t *testing.T) {
	got, err := parseStatmRSS("5000 1200 300 10 0 900 0\n", 4096)
	require.NoError(t, err)
	assert.Equal(t, int64(1200*4096), got)
	_, err = parseStatmRSS("5000", 4096)
	assert.Error(t, err)
	_, err = parseStatmRSS("5000 many", 4096)
	assert.Error(t, err)
}

// TestSampleThisProcess: sampling a live process through /proc reads
// plausible values (this test process has memory and has used CPU).
func TestSampleThisProcess(t *testing.T) {
	s, err := sampleProc("/proc/self", time.Now())
	require.NoError(t, err)
	assert.Positive(t, s.RSSBytes)
	assert.Positive(t, s.CPU, "the test binary has run for a while")
}

// TestConfigInfo: the labels of kvserver_config_info, from the text format
// as kvserver's promhttp writes it; a missing or repeated metric is an error.
func TestConfigInfo(t *testing.T) {
	text := `# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines 12
# HELP kvserver_config_info The settings kvserver runs with.
# TYPE kvserver_config_info gauge
kvserver_config_info{cache_mb="16",io_delay="5ms",io_delay_dist="exp",pool="lifo",queue_timeout="0s",version="devel",workers="2",odd="a \"quoted\" value"} 1
`
	families, err := parseMetrics(strings.NewReader(text))
	require.NoError(t, err)
	info, err := configInfo(families, nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"cache_mb": "16", "io_delay": "5ms", "io_delay_dist": "exp", "pool": "lifo",
		"queue_timeout": "0s", "version": "devel", "workers": "2", "odd": `a "quoted" value`,
	}, info)

	families, err = parseMetrics(strings.NewReader("go_goroutines 12\n"))
	require.NoError(t, err)
	_, err = configInfo(families, nil)
	assert.ErrorContains(t, err, "kvserver_config_info is not in")

	families, err = parseMetrics(strings.NewReader("kvserver_config_info{pool=\"a\"} 1\nkvserver_config_info{pool=\"b\"} 1\n"))
	require.NoError(t, err)
	_, err = configInfo(families, nil)
	assert.ErrorContains(t, err, "2 series")

	_, err = parseMetrics(strings.NewReader("kvserver_config_info{pool=} 1\n"))
	assert.Error(t, err)
}

// TestLineTail: the newest lines, oldest first, however many were added.
func TestLineTail(t *testing.T) {
	tail := newLineTail(3)
	assert.Empty(t, tail.last(5))
	tail.add("a")
	tail.add("b")
	assert.Equal(t, []string{"a", "b"}, tail.last(5))
	for i := range 7 {
		tail.add(fmt.Sprint(i))
	}
	assert.Equal(t, []string{"4", "5", "6"}, tail.last(5))
	assert.Equal(t, []string{"5", "6"}, tail.last(2))
	assert.Empty(t, tail.last(0))
}

// TestLineTailConcurrent: adding while reading is safe (run with -race).
func TestLineTailConcurrent(t *testing.T) {
	tail := newLineTail(16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 1000 {
			tail.add(fmt.Sprint(i))
		}
	}()
	for range 100 {
		assert.LessOrEqual(t, len(tail.last(10)), 10)
	}
	<-done
	assert.Equal(t, "999", tail.last(1)[0])
}

// TestWaitIdleCountsQuietWindowsInARow: idle is the caller's count of quiet
// windows in a row; a busy one starts the count again; a server busy past within
// is an error that says so; a failed tick or sample ends the wait.
func TestWaitIdleCountsQuietWindowsInARow(t *testing.T) {
	quiet := time.Duration(IdleShare*float64(IdleWindow)) - time.Millisecond
	busy := IdleWindow / 2
	f := func(use []time.Duration, within time.Duration, windows ...int) (time.Duration, int, error) {
		t.Helper()
		var total time.Duration
		i := 0
		cpu := func() (time.Duration, error) { return total, nil }
		tick := func() error {
			if i >= len(use) {
				t.Fatalf("waitIdle looked at window %d of %d", i+1, len(use))
			}
			total += use[i]
			i++
			return nil
		}
		n := IdleWindows
		if len(windows) > 0 {
			n = windows[0]
		}
		waited, err := waitIdle(cpu, tick, n, within)
		return waited, i, err
	}
	waited, n, err := f([]time.Duration{busy, busy, quiet, quiet, quiet, quiet}, time.Minute)
	require.NoError(t, err)
	assert.Equal(t, 6, n)
	assert.Equal(t, 6*IdleWindow, waited)

	_, n, err = f([]time.Duration{quiet, quiet, quiet, busy, quiet, quiet, quiet, quiet}, time.Minute)
	require.NoError(t, err)
	assert.Equal(t, 8, n, "a busy window starts the count again")

	waited, n, err = f([]time.Duration{busy, quiet, busy, quiet, quiet}, time.Minute, SettledWindows)
	require.NoError(t, err)
	assert.Equal(t, 5, n, "a settled start: its own count of quiet windows in a row")
	assert.Equal(t, 5*IdleWindow, waited)

	waited, n, err = f([]time.Duration{busy, busy, busy, busy}, 2*time.Second)
	assert.ErrorContains(t, err, "still busy after 2s")
	assert.Equal(t, 4, n)
	assert.Equal(t, 2*time.Second, waited)

	_, err = waitIdle(func() (time.Duration, error) { return 0, nil }, func() error { return context.Canceled }, IdleWindows, time.Minute)
	assert.ErrorIs(t, err, context.Canceled)
	_, err = waitIdle(func() (time.Duration, error) { return 0, fmt.Errorf("gone") }, func() error { return nil }, IdleWindows, time.Minute)
	assert.ErrorContains(t, err, "gone")
}

func TestServingLineFindsTheAddressOfKvserverAndBareServer(t *testing.T) {
	f := func(line, want string) {
		t.Helper()
		m := servingLine.FindStringSubmatch(line)
		if want == "" {
			assert.Nil(t, m, line)
			return
		}
		require.NotNil(t, m, line)
		assert.Equal(t, want, m[1], line)
	}
	f(`time=2026-11-27T12:00:00Z level=INFO msg=serving addr=127.0.0.1:40123 pool=direct data=/tmp/x`, "127.0.0.1:40123")
	f(`bare-server listening on http://127.0.0.1:40124`, "127.0.0.1:40124")
	f(`time=2026-11-27T12:00:00Z level=INFO msg=starting addr=127.0.0.1:40125`, "")
}

func TestParseConfigInfo(t *testing.T) {
	in := "kvserver_http_requests_total{code=\"200\"} 5\n" +
		`kvserver_config_info{pool="fifo",version="v1.2 \"rc\"",cap="0",note="a\\b"} 1` + "\n"
	got, _ := configInfo(parseMetrics(strings.NewReader(in)))
	assert.Equal(t, map[string]string{"pool": "fifo", "version": `v1.2 "rc"`, "cap": "0", "note": `a\b`}, got)
	got, _ = configInfo(parseMetrics(strings.NewReader("go_goroutines 5\n")))
	assert.Nil(t, got, "no info metric: not a kvserver")
}
