package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/loadgen/bareserver"
	"github.com/kvpool/kvpool/internal/loadgen/fill"
	"github.com/kvpool/kvpool/internal/loadgen/loadgentest"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/report"
	"github.com/kvpool/kvpool/internal/loadgen/saturate"
)

// bare starts the bare server on 127.0.0.1:0 for the test; returns its URL.
func bare(t *testing.T) string {
	t.Helper()
	return loadgentest.ServeHandler(t, bareserver.Handler)
}

// fakeKvserver answers the API like the bare server and serves /metrics
// with kvserver's info metric.
func fakeKvserver(t *testing.T) string {
	t.Helper()
	return loadgentest.ServeHandler(t, func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/metrics" {
			ctx.SetBodyString("# HELP kvserver_config_info settings\n# TYPE kvserver_config_info gauge\n" +
				`kvserver_config_info{cache_mb="64",cap="128",io_delay="0s",io_delay_dist="fixed",overflow="reject",pool="lifo",queue_timeout="0s",sync="false",version="devel",workers="2"} 1` + "\n")
			return
		}
		bareserver.Handler(ctx)
	})
}

// invoke runs the command line and returns exit code, stdout, stderr.
func invoke(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return invokeCtx(t, context.Background(), args...)
}

func invokeCtx(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

func readSummary(t *testing.T, dir string) report.Summary {
	t.Helper()
	s, err := report.ReadSummary(dir)
	require.NoError(t, err)
	return s
}

func TestAttackPrintsWrk2TablesAndWritesFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	code, out, errs := invoke(t, "attack", "-target", bare(t), "-rate", "500", "-duration", "300ms",
		"-conns", "2", "-max-conns", "4", "-keys", "100", "-workload", "get=0.5,put=0.3,delete=0.2", "-interval", "100ms", "-out", dir)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "Latency Distribution (HdrHistogram - Recorded Latency)")
	assert.Contains(t, out, "Latency Distribution (HdrHistogram - Uncorrected Latency")
	assert.Regexp(t, `(?m)^ 99\.900% +\d+\.\d\d(us|ms)$`, out)
	assert.Contains(t, out, "150 requests in")
	assert.Contains(t, out, "Loader CPU:")
	for _, f := range []string{report.SummaryFile, report.CorrectedFile, report.UncorrectedFile,
		record.CorrectedLogFile, record.UncorrectedLogFile, record.ResultsFile} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	s := readSummary(t, dir)
	assert.Equal(t, "get=0.5,put=0.3,delete=0.2", s.Workload)
	assert.Nil(t, s.Server, "the bare server is not a kvserver")
	assert.Positive(t, s.StatusCodes["202"], "DELETEs answered")
	require.NotEmpty(t, s.Series, "the per-interval series")
	var n int64
	for _, p := range s.Series {
		n += p.Responses
	}
	assert.Equal(t, int64(150), n)
	assert.Equal(t, 0.1, s.IntervalS)
}

// Without -out a run gets results/<UTC time>-<pool or server>-<workload>-<rate>/,
// and a kvserver's settings are recorded.
func TestDefaultOutDirNamesTheRun(t *testing.T) {
	t.Chdir(t.TempDir())
	code, _, errs := invoke(t, "attack", "-target", bare(t), "-rate", "200", "-duration", "100ms", "-conns", "1", "-q", "-workload", "mixed:0.9")
	require.Equal(t, 0, code, errs)
	code, _, errs = invoke(t, "attack", "-target", fakeKvserver(t), "-rate", "200", "-duration", "100ms", "-conns", "1", "-q")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "kvserver pool=lifo workers=2 cap=128 overflow=reject")

	entries, err := os.ReadDir(report.ResultsRoot)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	require.Len(t, names, 2, "%v", names)
	var server, kv string
	for _, n := range names {
		if strings.Contains(n, "-lifo-") {
			kv = n
		} else {
			server = n
		}
	}
	assert.Regexp(t, `^\d{8}T\d{6}Z-server-mixed0\.9-200$`, server)
	assert.Regexp(t, `^\d{8}T\d{6}Z-lifo-get-200$`, kv)
	s := readSummary(t, filepath.Join(report.ResultsRoot, kv))
	assert.Equal(t, "lifo", s.Server["pool"])
	assert.Equal(t, "2", s.Server["workers"])
	assert.Equal(t, "0s", s.Server["queue_timeout"])
	assert.Nil(t, readSummary(t, filepath.Join(report.ResultsRoot, server)).Server)
}

func TestOutDirWithFilesIsRefused(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "summary.json"), []byte("{}"), 0o644))
	code, _, errs := invoke(t, "attack", "-target", bare(t), "-duration", "100ms", "-out", dir)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "already holds 1 files (summary.json")
	assert.Contains(t, errs, "leave -out out")
}

func TestEnvironmentSetsDefaults(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	t.Setenv("LOADTEST_RATE", "250")
	t.Setenv("LOADTEST_MAX_CONNS", "3")
	code, _, errs := invoke(t, "attack", "-target", bare(t), "-duration", "200ms", "-conns", "2", "-q", "-out", dir)
	require.Equal(t, 0, code, errs)
	s := readSummary(t, dir)
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
	f("get=G,put=P,delete=D", "attack", "-workload", "most")
	f("summing to 0.9", "attack", "-workload", "get=0.8,put=0.1")
	f("not a loopback address", "attack", "-target", "http://192.0.2.1:80")
	f("-max-conns 8 is below -conns 64", "attack", "-max-conns", "8")
	f("unexpected arguments", "attack", "extra")
	f("-max-errors 2 is not a share", "attack", "-max-errors", "2")
	f("-vegeta-latency \"both\"", "attack", "-vegeta-latency", "both")
	f("-slo must be positive", "saturate", "-slo", "0s")
	f("-from (5)", "fill", "-from", "5", "-to", "4")
	f("-out is required", "merge", "a", "b")
	f("at least two run folders", "merge", "a", "-out", "c")
	f("-render takes no other flag", "compare", "-render", "x", "-preset", "capacity")
	f("-closed-pairs -1: want 0 (none) or more", "compare", "-closed-pairs", "-1")
	f("-pair-round 0s: want a length above 0, such as 1s", "compare", "-pair-round", "0")
}

// compare -render of a folder that holds no comparison says so and exits 1.
func TestCompareRenderOfNoComparison(t *testing.T) {
	code, _, errs := invoke(t, "compare", "-render", t.TempDir())
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "cannot read the comparison to render")
}

// Each subcommand has its own flag set with only its flags; a flag of
// another subcommand is refused, naming the subcommand.
func TestFlagSets(t *testing.T) {
	var o options
	var maxErrors float64
	var sc saturate.Config
	var so saturateOptions
	var ids fill.Range
	var out string
	list := func(fs *flag.FlagSet) []string {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		return names // VisitAll visits in lexical order
	}
	common := []string{"allow-remote", "conns", "cpuprofile", "cpus", "dist", "engine", "grow-after", "interval", "keys", "loops", "max-conns",
		"out", "progress", "q", "quantum", "results", "seed", "target", "timeout", "transport", "value-size",
		"vegeta-latency", "workload", "zipf-s",
		"backoff", "backoff-base", "backoff-cap", "client-timeout", "clients", "retries", "retry-after", "retry-budget", "retry-on", "send-deadline", "mark-retries", "throttle"}
	sort.Strings(common)
	attack := append(append([]string{}, common...), "duration", "max-errors", "rate", "shard", "spike", "spike-at", "start-at")
	sort.Strings(attack)
	assert.Equal(t, attack, list(attackFlags(&o, &maxErrors, &bytes.Buffer{})))
	sat := append(append([]string{}, common...), "anchor-share", "closed-for", "closed-rounds", "cooldown", "factor", "max-error-rate", "max-rate",
		"max-validations", "precision", "quick", "slo", "start-rate", "step", "validate")
	sort.Strings(sat)
	assert.Equal(t, sat, list(saturateFlags(&o, &sc, &so, &bytes.Buffer{})))
	assert.Equal(t, []string{"allow-remote", "conns", "cpuprofile", "cpus", "from", "keys", "loops", "out", "progress", "q", "target", "timeout", "to", "value-size"},
		list(fillFlags(&o, &ids, &bytes.Buffer{})))
	assert.Equal(t, []string{"out"}, list(mergeFlags(&out, &bytes.Buffer{})))

	refused := func(sub, flag string, args ...string) {
		t.Helper()
		code, _, errs := invoke(t, append([]string{sub, flag}, args...)...)
		assert.Equal(t, 2, code, "%s %s", sub, flag)
		assert.Contains(t, errs, "flag provided but not defined: "+flag, "%s %s", sub, flag)
		assert.Contains(t, errs, "loadtest "+sub+" does not take it", "%s %s", sub, flag)
	}
	refused("fill", "-rate", "5000")
	refused("fill", "-workload", "get")
	refused("fill", "-duration", "1s")
	refused("saturate", "-rate", "5000")
	refused("saturate", "-duration", "10s")
	refused("attack", "-slo", "1s")
	refused("attack", "-from", "3")
	refused("merge", "-rate", "1")
	refused("saturate", "-shard", "1/2")
	refused("fill", "-start-at", "1795003200")
	refused("fill", "-retries", "2")
	refused("fill", "-clients", "retry")
	refused("saturate", "-spike", "2x:1s")

	code, _, errs := invoke(t, "saturate", "-h")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "3 no rate held over a validating run")
}

func TestAttackFailsWhenNothingListens(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	code, _, errs := invoke(t, "attack", "-target", "http://127.0.0.1:1", "-duration", "100ms", "-out", dir)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "is the server running")
	assert.NoDirExists(t, dir, "a run that never started leaves no folder")
}

// Above -max-errors attack writes its results, then exits 1 saying why.
func TestAttackAboveMaxErrorsExitsOne(t *testing.T) {
	var n atomic.Int64
	url := loadgentest.ServeHandler(t, func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == api.PathEntity && n.Add(1)%10 == 0 { // 10 % fail
			ctx.SetStatusCode(fasthttp.StatusInternalServerError)
			return
		}
		bareserver.Handler(ctx)
	})
	dir := filepath.Join(t.TempDir(), "run")
	code, _, errs := invoke(t, "attack", "-target", url, "-rate", "500", "-duration", "200ms", "-conns", "2", "-q", "-out", dir)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "10.00% of requests failed (10 of 100), above -max-errors 1%")
	assert.Contains(t, errs, "results in "+dir)
	assert.Equal(t, int64(10), readSummary(t, dir).Errors, "the results were written first")

	dir2 := filepath.Join(t.TempDir(), "run")
	code, _, errs = invoke(t, "attack", "-target", url, "-rate", "500", "-duration", "200ms", "-conns", "2", "-q", "-max-errors", "0.2", "-out", dir2)
	assert.Equal(t, 0, code, errs)
}

// Ctrl-C (a cancelled context) ends attack with where the partial
// results are. The server cancels on its 50th request: an event, not a
// time.
func TestAttackInterruptedSaysWhereThePartialResultsAre(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var n atomic.Int64
	url := loadgentest.ServeHandler(t, func(c *fasthttp.RequestCtx) {
		if string(c.Path()) == api.PathEntity && n.Add(1) == 50 {
			cancel()
		}
		bareserver.Handler(c)
	})
	dir := filepath.Join(t.TempDir(), "run")
	code, _, errs := invokeCtx(t, ctx, "attack", "-target", url, "-rate", "1000", "-duration", "10s", "-conns", "2", "-q", "-out", dir)
	assert.Equal(t, 1, code)
	assert.Regexp(t, `interrupted after \d+\.\d s; partial results in `+regexpQuote(dir), errs)
	s := readSummary(t, dir)
	assert.GreaterOrEqual(t, s.Sent, int64(40), "what was answered before the interrupt")
	assert.Less(t, s.Sent, int64(10_000))
	assert.NotContains(t, errs, "context canceled")
}

// A rate the loader (here: one connection to a slow server) cannot offer
// is reported, and the run still exits 0: its numbers are what they are.
// The server's first answer takes longer than the whole schedule (the
// sleep is the slow server, the test's subject, not a synchronisation):
// every other request is sent late, however fast or slow the machine.
func TestUnreachableRateWarnsAndExitsZero(t *testing.T) {
	var n atomic.Int64
	url := loadgentest.ServeHandler(t, func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == api.PathEntity && n.Add(1) == 1 {
			time.Sleep(200 * time.Millisecond)
		}
		bareserver.Handler(ctx)
	})
	dir := filepath.Join(t.TempDir(), "run")
	code, out, errs := invoke(t, "attack", "-target", url, "-rate", "1000", "-duration", "100ms", "-conns", "1", "-max-conns", "1", "-q", "-out", dir)
	assert.Equal(t, 0, code, errs)
	assert.Contains(t, out, "WARNING")
	assert.Contains(t, out, "sent more than 1ms behind schedule")
}

func regexpQuote(s string) string {
	return strings.NewReplacer(`\`, `\\`, `.`, `\.`, `+`, `\+`, `(`, `\(`, `)`, `\)`, `[`, `\[`, `]`, `\]`).Replace(s)
}

func TestFillStoresTheRange(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	code, out, errs := invoke(t, "fill", "-target", fakeKvserver(t), "-keys", "300", "-conns", "4", "-out", dir)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "all ids 1..300 stored")
	assert.Contains(t, out, "201: 300")
	b, err := os.ReadFile(filepath.Join(dir, FillFile))
	require.NoError(t, err)
	assert.Contains(t, string(b), `"resume_from": 301`)
	assert.Contains(t, string(b), `"pool": "lifo"`, "the server's settings are recorded")

	code, out, _ = invoke(t, "fill", "-target", bare(t), "-from", "101", "-to", "150", "-conns", "4", "-q", "-out", filepath.Join(t.TempDir(), "f"))
	require.Equal(t, 0, code)
	assert.Contains(t, out, "50 PUTs")
}

// merge takes its folders before or after -out.
func TestMergeCommand(t *testing.T) {
	url := bare(t)
	base := t.TempDir()
	a, b, m := filepath.Join(base, "a"), filepath.Join(base, "b"), filepath.Join(base, "m")
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i, dir := range []string{a, b} {
		wg.Go(func() {
			codes[i], _, _ = invoke(t, "attack", "-target", url, "-rate", "200", "-duration", "300ms", "-conns", "1", "-q", "-out", dir)
		})
	}
	wg.Wait()
	require.Equal(t, []int{0, 0}, codes)
	code, out, errs := invoke(t, "merge", a, b, "-out", m)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "120 requests in")
	assert.Contains(t, out, "Latency Distribution (HdrHistogram - Recorded Latency)")
	assert.Equal(t, int64(120), readSummary(t, m).Sent)
	assert.Equal(t, 400.0, readSummary(t, m).AskedRate)

	code, _, errs = invoke(t, "merge", a, b, "-out", m)
	assert.Equal(t, 2, code, "an existing merge is not overwritten")
	assert.Contains(t, errs, "already holds")
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
	code, _, errs := invoke(t, "attack", "-target", url, "-rate", "100", "-duration", "100ms", "-conns", "1", "-q", "-out", filepath.Join(t.TempDir(), "r"))
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
