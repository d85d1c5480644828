package merge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	vegeta "github.com/tsenart/vegeta/v12/lib"
	"github.com/valyala/fasthttp"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/latency"
	"github.com/kvpool/kvpool/internal/loadgen/bareserver"
	"github.com/kvpool/kvpool/internal/loadgen/client"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/engine"
	"github.com/kvpool/kvpool/internal/loadgen/loadgentest"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/report"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
)

// serviceTime is the bare server's mean service time here: long enough
// that the server's latency, not each loader's own, is what the
// percentiles show.
const serviceTime = 2 * time.Millisecond

// attack runs one loader at rate into dir and writes its summary.
func attack(t *testing.T, url string, rate float64, dir string, seed uint64) *record.Result {
	t.Helper()
	c := config.Default()
	c.Target, c.Rate, c.Duration = url, rate, time.Second
	c.Conns, c.MaxConns, c.Progress, c.Seed = 8, 8, 0, seed
	c.Workload.Keys = 1000
	c.Out, c.Interval = dir, 250*time.Millisecond
	res, err := engine.Run(context.Background(), c, nil)
	require.NoError(t, err)
	require.NoError(t, res.OutputErr)
	require.NoError(t, report.WriteFiles(dir, res, nil))
	return res
}

// Two loaders at half the rate each, at the same time, merged, against
// one loader at the full rate: the same number of requests, and
// percentiles of the same server (within what two runs on a shared
// machine can promise: the same order of magnitude at p50).
func TestTwoHalfRateLoadersMatchOneAtFullRate(t *testing.T) {
	url := loadgentest.Serve(t, bareserver.New(serviceTime))
	base := t.TempDir()
	a, b, merged, full := filepath.Join(base, "a"), filepath.Join(base, "b"), filepath.Join(base, "merged"), filepath.Join(base, "full")
	var wg sync.WaitGroup
	halves := make([]*record.Result, 2)
	for i, dir := range []string{a, b} {
		wg.Go(func() { halves[i] = attack(t, url, 200, dir, uint64(i+1)) })
	}
	wg.Wait()
	one := attack(t, url, 400, full, 3)

	m, err := Runs([]string{a, b}, merged)
	require.NoError(t, err)
	assert.Equal(t, one.Sent, m.Sent, "the same request count")
	assert.Equal(t, halves[0].Sent+halves[1].Sent, m.Sent)
	assert.Equal(t, one.Planned, m.Planned)
	assert.Equal(t, 400.0, m.Config.Rate, "rates are summed")
	assert.Equal(t, m.Sent, m.Corrected.TotalCount(), "the histograms are merged, not averaged")
	assert.Equal(t, max(halves[0].Corrected.Max(), halves[1].Corrected.Max()), m.Corrected.Max(), "the max is the larger max")
	var codes int64
	for _, n := range m.Codes {
		codes += n
	}
	assert.Equal(t, m.Sent, codes, "status counts summed")
	for _, p := range []float64{50, 90, 99} {
		// A merged quantile lies between the quantiles of its parts: what
		// merging histograms (not averaging percentiles) guarantees.
		mv := latency.ValueAt(m.Corrected, p)
		h0, h1 := latency.ValueAt(halves[0].Corrected, p), latency.ValueAt(halves[1].Corrected, p)
		assert.GreaterOrEqual(t, mv, min(h0, h1)*999/1000, "p%v merged %v, halves %v and %v", p, mv, h0, h1)
		assert.LessOrEqual(t, mv, max(h0, h1)*1001/1000, "p%v merged %v, halves %v and %v", p, mv, h0, h1)
	}
	s, err := report.ReadSummary(merged)
	require.NoError(t, err)
	assert.Equal(t, m.Sent, s.Sent)
	var seriesTotal int64
	for _, p := range s.Series {
		seriesTotal += p.Responses
	}
	assert.Equal(t, m.Sent, seriesTotal, "the merged series holds every response")

	for _, name := range []string{record.CorrectedLogFile, record.UncorrectedLogFile} {
		hs, err := record.ReadIntervalLog(filepath.Join(merged, name))
		require.NoError(t, err)
		var total int64
		for _, h := range hs {
			total += h.TotalCount()
		}
		assert.Equal(t, m.Sent, total, "%s: the merged interval log holds every response", name)
	}

	f, err := os.Open(filepath.Join(merged, record.ResultsFile))
	require.NoError(t, err)
	defer f.Close()
	dec := vegeta.NewDecoder(f)
	attacks := map[string]int64{}
	for {
		var r vegeta.Result
		if err := dec.Decode(&r); err != nil {
			require.True(t, errors.Is(err, io.EOF), err)
			break
		}
		attacks[r.Attack]++
	}
	assert.Len(t, attacks, 2, "one attack name per loader, so vegeta plot draws each: %v", attacks)
	var n int64
	for _, c := range attacks {
		n += c
	}
	assert.Equal(t, m.Sent, n, "results.bin holds both runs")
}

// Runs of different loads, of different lengths or not made at the same
// time are refused, saying what differs.
func TestMergeRefusesRunsThatDiffer(t *testing.T) {
	url := loadgentest.Serve(t, bareserver.New(serviceTime))
	base := t.TempDir()
	a := filepath.Join(base, "a")
	attack(t, url, 100, a, 1)
	variant := func(name string, edit func(m map[string]any)) string {
		dir := filepath.Join(base, name)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for _, f := range []string{record.CorrectedLogFile, record.UncorrectedLogFile} {
			b, err := os.ReadFile(filepath.Join(a, f))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
		}
		b, err := os.ReadFile(filepath.Join(a, report.SummaryFile))
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		edit(m)
		b, err = json.Marshal(m)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, report.SummaryFile), b, 0o644))
		return dir
	}
	f := func(dir string, want ...string) {
		t.Helper()
		_, err := Runs([]string{a, dir}, filepath.Join(base, "out-"+filepath.Base(dir)))
		require.Error(t, err)
		for _, w := range want {
			assert.Contains(t, err.Error(), w)
		}
		assert.NoFileExists(t, filepath.Join(base, "out-"+filepath.Base(dir), report.SummaryFile), "nothing merged")
	}
	f(variant("put", func(m map[string]any) { m["workload"] = "put" }), "workload get", "has put")
	f(variant("longer", func(m map[string]any) { m["duration_s"] = 1.5 }), "-duration 1s", "has 1.5s")
	f(variant("later", func(m map[string]any) {
		start, _ := time.Parse(time.RFC3339Nano, m["started_at"].(string))
		m["started_at"] = start.Add(time.Hour).Format(time.RFC3339Nano)
	}), "did not run at the same time")
	f(variant("interval", func(m map[string]any) { m["interval_s"] = 2.0 }), "-interval")

	_, err := Runs([]string{a}, filepath.Join(base, "one"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "at least two")
}

// Two loaders under a client model, merged: their clients' counts are
// added, and the model is kept.
func TestMergeAddsClientCounts(t *testing.T) {
	url := loadgentest.Serve(t, bareserver.New(serviceTime))
	base := t.TempDir()
	var halves [2]*record.Result
	dirs := []string{filepath.Join(base, "a"), filepath.Join(base, "b")}
	var wg sync.WaitGroup
	for i, dir := range dirs {
		wg.Go(func() { halves[i] = attackWithClients(t, url, dir, uint64(i+1)) })
	}
	wg.Wait()
	m, err := Runs(dirs, filepath.Join(base, "merged"))
	require.NoError(t, err)
	want := halves[0].Clients
	want.Add(halves[1].Clients)
	assert.Equal(t, want, m.Clients)
	assert.Equal(t, int64(200), m.Clients.FirstTries, "100 first tries each")
	assert.Equal(t, halves[0].Config.Client, m.Config.Client)
}

// attackWithClients is attack at 200 req/s for 500 ms under a client
// model (1 s timeout, one retry).
func attackWithClients(t *testing.T, url, dir string, seed uint64) *record.Result {
	t.Helper()
	c := config.Default()
	c.Target, c.Rate, c.Duration = url, 200, 500*time.Millisecond
	c.Conns, c.MaxConns, c.Progress, c.Seed = 4, 4, 0, seed
	c.Workload.Keys = 1000
	c.Out = dir
	c.Client = client.Model{Timeout: time.Second, Retries: 1}
	res, err := engine.Run(context.Background(), c, nil)
	require.NoError(t, err)
	require.NoError(t, report.WriteFiles(dir, res, nil))
	return res
}

// Two loaders whose one connection the server holds longer than the
// schedule allows and closes after every third answer, merged: their
// waits for a connection and their reconnects are added, in all and
// interval by interval.
func TestMergeAddsConnectionWaitsAndReconnects(t *testing.T) {
	slow := func(ctx *fasthttp.RequestCtx) {
		time.Sleep(10 * time.Millisecond) // the slow server under test, not synchronisation
		bareserver.Handler(ctx)
	}
	url := loadgentest.Serve(t, &fasthttp.Server{MaxRequestsPerConn: 3, Handler: slow})
	base := t.TempDir()
	var halves [2]*record.Result
	dirs := []string{filepath.Join(base, "a"), filepath.Join(base, "b")}
	var wg sync.WaitGroup
	for i, dir := range dirs {
		wg.Go(func() {
			c := config.Default()
			c.Target, c.Rate, c.Duration = url, 200, 250*time.Millisecond
			c.Conns, c.MaxConns, c.Progress, c.Seed = 1, 1, 0, uint64(i+1)
			c.Workload.Keys = 1000
			c.Out, c.Interval = dir, 100*time.Millisecond
			res, err := engine.Run(context.Background(), c, nil)
			require.NoError(t, err)
			require.NoError(t, report.WriteFiles(dir, res, nil))
			halves[i] = res
		})
	}
	wg.Wait()
	for i, h := range halves {
		require.Positive(t, h.ConnWaits, "loader %d: its one connection was busy as requests fell due", i)
		require.Positive(t, h.Reconnects, "loader %d", i)
	}
	m, err := Runs(dirs, filepath.Join(base, "merged"))
	require.NoError(t, err)
	assert.Equal(t, halves[0].ConnWaits+halves[1].ConnWaits, m.ConnWaits)
	assert.Equal(t, halves[0].OwnLate+halves[1].OwnLate, m.OwnLate)
	assert.Equal(t, halves[0].Reconnects+halves[1].Reconnects, m.Reconnects)
	assert.Equal(t, halves[0].OwnLagKnown && halves[1].OwnLagKnown, m.OwnLagKnown)
	var waits, reconnects int64
	for _, p := range m.Intervals {
		waits, reconnects = waits+p.ConnWaits, reconnects+p.Reconnects
	}
	assert.Equal(t, m.ConnWaits, waits, "the merged series add up to the total")
	assert.Equal(t, m.Reconnects, reconnects, "the merged series add up to the total")
}

// A mix's operations are reported apart end to end: each loader's
// summary.json gives every operation's responses, codes, errors and
// 503s summing to the run's, its series every operation's part of each
// interval summing to the interval, and attack's report a table of them;
// two such runs merged give exactly the sums, interval by interval, with
// each operation's p99 from its merged interval log. The server refuses
// every fourth PUT with a 503, as an admission that sheds writes would.
func TestMixedRunsReportAndMergeOps(t *testing.T) {
	var puts atomic.Int64
	h := func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Method()) == fasthttp.MethodPut && puts.Add(1)%4 == 0 {
			ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
			return
		}
		bareserver.Handler(ctx)
	}
	url := loadgentest.Serve(t, &fasthttp.Server{Handler: h})
	base := t.TempDir()
	dirs := []string{filepath.Join(base, "a"), filepath.Join(base, "b")}
	var halves [2]*record.Result
	var wg sync.WaitGroup
	for i, dir := range dirs {
		wg.Go(func() {
			c := config.Default()
			c.Target, c.Rate, c.Duration = url, 400, time.Second
			c.Conns, c.MaxConns, c.Progress, c.Seed = 8, 8, 0, uint64(i+1)
			c.Workload.Keys, c.Workload.ValueSize = 1000, 64
			c.Workload.Mix = workload.Mix{Get: 0.6, Put: 0.3, Delete: 0.1}
			c.Out, c.Interval = dir, 250*time.Millisecond
			res, err := engine.Run(context.Background(), c, nil)
			require.NoError(t, err)
			require.NoError(t, res.OutputErr)
			require.NoError(t, report.WriteFiles(dir, res, nil))
			halves[i] = res
		})
	}
	wg.Wait()

	for i, dir := range dirs {
		s, err := report.ReadSummary(dir)
		require.NoError(t, err)
		require.Len(t, s.Ops, 3, "loader %d: get, put and delete", i)
		checkOpsSum(t, s)
		assert.Positive(t, s.Ops["put"].Shed, "loader %d: PUTs refused", i)
		assert.Zero(t, s.Ops["get"].Shed, "loader %d: GETs never refused", i)
		var out bytes.Buffer
		report.Print(&out, halves[i])
		assert.Contains(t, out.String(), "Per operation (corrected latency):")
		assert.Regexp(t, `\n  PUT +\d+ `, out.String())
	}

	merged := filepath.Join(base, "merged")
	m, err := Runs(dirs, merged)
	require.NoError(t, err)
	require.Len(t, m.Ops, 3)
	for _, mo := range m.Ops {
		var sent, errs int64
		for _, h := range halves {
			o := h.Op(mo.Op)
			require.NotNil(t, o)
			sent += o.Sent
			errs += o.ErrorCount
		}
		assert.Equal(t, sent, mo.Sent, "%v: responses summed", mo.Op)
		assert.Equal(t, errs, mo.ErrorCount, "%v: errors summed", mo.Op)
		assert.Equal(t, sent, mo.Corrected.TotalCount(), "%v: histograms merged", mo.Op)
		assert.Equal(t, max(halves[0].Op(mo.Op).Corrected.Max(), halves[1].Op(mo.Op).Corrected.Max()), mo.Corrected.Max(), "%v", mo.Op)
	}
	s, err := report.ReadSummary(merged)
	require.NoError(t, err)
	checkOpsSum(t, s)
	a, b := readSeries(t, dirs[0]), readSeries(t, dirs[1])
	for i, p := range s.Series {
		for name, o := range p.Ops {
			var want int64
			for _, run := range [][]record.Interval{a, b} {
				if i < len(run) {
					want += run[i].Ops[name].Responses
				}
			}
			assert.Equal(t, want, o.Responses, "interval %d, %s: the runs' sum", i, name)
			if o.Responses > 0 {
				assert.Positive(t, o.P99Us, "interval %d, %s: a p99 from the merged log", i, name)
			}
		}
	}
	hs, err := record.ReadIntervalLog(filepath.Join(merged, record.OpLogFile(api.Put)))
	require.NoError(t, err)
	var puts2 int64
	for _, h := range hs {
		puts2 += h.TotalCount()
	}
	assert.Equal(t, m.Op(api.Put).Sent, puts2, "the merged PUT log holds every PUT")
}

// checkOpsSum wants s's operations to sum to s: responses, errors, status
// codes, and in every interval of its series, responses and errors.
func checkOpsSum(t *testing.T, s report.Summary) {
	t.Helper()
	var sent, errs int64
	codes := map[string]int64{}
	for name, o := range s.Ops {
		sent += o.Responses
		errs += o.Errors
		var n int64
		for c, k := range o.StatusCodes {
			codes[c] += k
			n += k
		}
		assert.Equal(t, o.Responses, n, "%s: its codes sum to its responses", name)
		assert.Equal(t, o.StatusCodes["503"], o.Shed, "%s", name)
		assert.Equal(t, o.Responses, o.Corrected.Count, "%s", name)
	}
	assert.Equal(t, s.Sent, sent, "responses sum to the run's")
	assert.Equal(t, s.Errors, errs, "errors sum to the run's")
	assert.Equal(t, s.StatusCodes, codes, "codes sum to the run's")
	for i, p := range s.Series {
		require.Len(t, p.Ops, 3, "interval %d", i)
		var n, e, shed int64
		for _, o := range p.Ops {
			n, e, shed = n+o.Responses, e+o.Errors, shed+o.Shed
		}
		assert.Equal(t, p.Responses, n, "interval %d: responses", i)
		assert.Equal(t, p.Errors, e, "interval %d: errors", i)
		assert.Equal(t, p.Shed, shed, "interval %d: 503s", i)
	}
}

func readSeries(t *testing.T, dir string) []record.Interval {
	t.Helper()
	s, err := report.ReadSummary(dir)
	require.NoError(t, err)
	return s.Series
}
