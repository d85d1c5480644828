package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/loadgen"
	"github.com/kvpool/kvpool/internal/loadgen/bareserver"
)

// bare starts the bare server on 127.0.0.1:0 for the test; returns its URL.
func bare(t *testing.T) string {
	t.Helper()
	ln, err := bareserver.Listen("127.0.0.1:0")
	require.NoError(t, err)
	srv := bareserver.New(0)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return "http://" + ln.Addr().String()
}

// invoke runs the command line and returns exit code, stdout, stderr.
func invoke(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestAttackPrintsWrk2TablesAndWritesFiles(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := invoke(t, "attack", "-target", bare(t), "-rate", "500", "-duration", "300ms",
		"-conns", "2", "-max-conns", "4", "-keys", "100", "-workload", "mixed:0.5", "-out", dir)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "Latency Distribution (HdrHistogram - Recorded Latency)")
	assert.Contains(t, out, "Latency Distribution (HdrHistogram - Uncorrected Latency")
	assert.Regexp(t, `(?m)^ 99\.900% +\d+\.\d\d(us|ms)$`, out)
	assert.Contains(t, out, "150 requests in")
	assert.Contains(t, out, "Loader CPU:")
	for _, f := range []string{loadgen.SummaryFile, loadgen.CorrectedFile, loadgen.UncorrectedFile, loadgen.ResultsFile} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
}

func TestEnvironmentSetsDefaults(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("LOADTEST_RATE", "250")
	t.Setenv("LOADTEST_MAX_CONNS", "3")
	code, _, errs := invoke(t, "attack", "-target", bare(t), "-duration", "200ms", "-conns", "2", "-q", "-out", dir)
	require.Equal(t, 0, code, errs)
	var s loadgen.Summary
	b, err := os.ReadFile(filepath.Join(dir, loadgen.SummaryFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &s))
	assert.Equal(t, 250.0, s.AskedRate)
	assert.Equal(t, 3, s.MaxConns)
	assert.Equal(t, int64(50), s.Sent)

	t.Setenv("LOADTEST_DURATION", "soon")
	code, _, errs = invoke(t, "attack", "-target", bare(t))
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "LOADTEST_DURATION")
}

func TestUsageErrorsExitTwo(t *testing.T) {
	f := func(want string, args ...string) {
		t.Helper()
		code, _, errs := invoke(t, args...)
		assert.Equal(t, 2, code, "%q", args)
		assert.Contains(t, errs, want, "%q", args)
	}
	f("usage: loadtest SUBCOMMAND")
	f("unknown subcommand", "stampede")
	f("mixed:R", "attack", "-workload", "most")
	f("not a loopback address", "attack", "-target", "http://192.0.2.1:80")
	f("-max-conns 8 is below -conns 64", "attack", "-max-conns", "8")
	f("unexpected arguments", "attack", "extra")
	f("-slo must be positive", "saturate", "-slo", "0s")
}

func TestAttackFailsWhenNothingListens(t *testing.T) {
	code, _, errs := invoke(t, "attack", "-target", "http://127.0.0.1:1", "-duration", "100ms")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "is the server running")
}

// TestSaturatePrintsTheCurve checks what saturate prints and writes, not
// where the search lands: on a shared machine a step may fall behind and
// add bisection steps (the search itself has deterministic tests in
// internal/loadgen). So: a header, one row per step in saturate.json, each
// a ramp, bisect or validate row, the validating row last, and a result
// line that agrees with the file.
func TestSaturatePrintsTheCurve(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := invoke(t, "saturate", "-target", bare(t), "-conns", "2", "-q",
		"-start-rate", "100", "-max-rate", "200", "-step", "200ms", "-validate", "300ms", "-cooldown", "10ms", "-out", dir)
	require.Equal(t, 0, code, errs)
	var sat loadgen.Saturation
	b, err := os.ReadFile(filepath.Join(dir, SaturateFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &sat))
	require.NotEmpty(t, sat.Steps)

	lines := strings.Split(out, "\n")
	assert.Regexp(t, `^phase +asked/s +achieved/s +p50 +p99`, lines[0])
	require.Greater(t, len(lines), len(sat.Steps))
	for i, step := range sat.Steps {
		assert.Regexp(t, `^(ramp|bisect|validate) +\d+ `, lines[1+i])
		assert.Regexp(t, fmt.Sprintf(`^\w+ +%.0f `, step.Asked), lines[1+i])
	}
	if sat.Rate > 0 {
		assert.Regexp(t, `^validate `, lines[len(sat.Steps)], "the validating run is the last row")
		assert.LessOrEqual(t, sat.Rate, 200.0)
		assert.Contains(t, out, fmt.Sprintf("saturation: %.0f req/s", sat.Rate))
		assert.FileExists(t, filepath.Join(dir, loadgen.SummaryFile), "the validating run's files")
	}
	if sat.HitMax {
		assert.Contains(t, out, "even -max-rate 200 passed")
	}
}

func TestFillStoresTheRange(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := invoke(t, "fill", "-target", bare(t), "-keys", "300", "-conns", "4", "-out", dir)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "all ids 1..300 stored")
	assert.Contains(t, out, "201: 300")
	b, err := os.ReadFile(filepath.Join(dir, "fill.json"))
	require.NoError(t, err)
	assert.Contains(t, string(b), `"resume_from": 301`)

	code, out, _ = invoke(t, "fill", "-target", bare(t), "-from", "101", "-to", "150", "-conns", "4", "-q")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "50 PUTs")
}

// syncBuffer is a bytes.Buffer safe to write from the server goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestBareServerServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	done := make(chan int)
	go func() { done <- run(ctx, []string{"bare-server", "-addr", "127.0.0.1:0"}, &out, &errb) }()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "listening on http://127.0.0.1:") },
		5*time.Second, 10*time.Millisecond)
	url := strings.TrimSpace(strings.TrimPrefix(out.String(), "bare-server listening on "))
	code, _, errs := invoke(t, "attack", "-target", url, "-rate", "100", "-duration", "100ms", "-conns", "1", "-q")
	assert.Equal(t, 0, code, errs)
	cancel()
	select {
	case code := <-done:
		assert.Equal(t, 0, code, errb.String())
	case <-time.After(5 * time.Second):
		t.Fatal("bare-server did not stop on cancel")
	}

	code, _, errs = invoke(t, "bare-server", "-addr", "0.0.0.0:0")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "not loopback")
}
