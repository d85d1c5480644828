package engine

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	vegeta "github.com/tsenart/vegeta/v12/lib"
	"github.com/tsenart/vegeta/v12/lib/plot"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/loadgen/bareserver"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/loadgentest"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/schedule"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
)

// runMixedToDir runs 300 requests of a three-way mix with the run's files
// streamed into a fresh directory.
func runMixedToDir(t *testing.T, vegetaLatency string) (*record.Result, string) {
	t.Helper()
	dir := t.TempDir()
	cfg := testConfig(loadgentest.ServeHandler(t, loadgentest.MixedStatuses), 1000, 300*time.Millisecond)
	cfg.Workload.Mix = workload.Mix{Get: 0.5, Put: 0.3, Delete: 0.2}
	cfg.Out, cfg.VegetaLatency, cfg.KeepRecords = dir, vegetaLatency, true
	cfg.Interval = 100 * time.Millisecond
	res := run(t, cfg)
	require.NoError(t, res.OutputErr)
	return res, dir
}

// readResults decodes results.bin with vegeta's own decoder, sniffing the
// format as `vegeta report` does.
func readResults(t *testing.T, path string) []vegeta.Result {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	dec := vegeta.DecoderFor(f)
	require.NotNil(t, dec, "vegeta does not recognise %s", path)
	var got []vegeta.Result
	for {
		var r vegeta.Result
		err := dec.Decode(&r)
		if errors.Is(err, io.EOF) {
			return got
		}
		require.NoError(t, err)
		got = append(got, r)
	}
}

// results.bin is vegeta's gob format, streamed as the run goes: vegeta's
// decoder reads back one Result per request with the same codes, send
// times and latencies, and vegeta's metrics agree with our counts. By
// default timestamps are the actual sends and latencies uncorrected.
func TestResultsBinRoundTripsThroughVegetasDecoder(t *testing.T) {
	res, dir := runMixedToDir(t, config.LatencyUncorrected)
	got := readResults(t, filepath.Join(dir, record.ResultsFile))
	require.Len(t, got, int(res.Sent))
	assert.NoFileExists(t, filepath.Join(dir, record.SpoolFile), "the spool is removed once results.bin is written")

	var m vegeta.Metrics
	bySeq := map[uint64]record.Record{}
	for _, rc := range res.Records {
		bySeq[rc.Seq] = rc
	}
	codes := map[int]int64{}
	methods := map[string]int{}
	for _, r := range got {
		m.Add(&r)
		codes[int(r.Code)]++
		methods[r.Method]++
		rc, ok := bySeq[r.Seq]
		require.True(t, ok, "seq %d", r.Seq)
		assert.Equal(t, time.Duration(rc.Latency), r.Latency)
		assert.False(t, r.Timestamp.Before(res.Start.Add(time.Duration(rc.Sent))), "timestamp is the actual send, or a lower Seq's later one")
		assert.Equal(t, res.Config.Name, r.Attack)
		assert.Equal(t, res.Config.Target+"/v0/entity?id="+strconv.FormatUint(rc.Key, 10), r.URL)
		assert.Empty(t, r.Error, "404 on GET and 2xx are not errors")
	}
	m.Close()
	assert.Equal(t, uint64(res.Sent), m.Requests)
	assert.Equal(t, res.Codes, codes)
	for _, method := range []string{"GET", "PUT", "DELETE"} {
		assert.Positive(t, methods[method], "the mix sends %s", method)
	}
	assert.Equal(t, res.Codes[202], int64(methods["DELETE"]), "every DELETE answered 202")
}

// results.bin is in Seq order with timestamps that never go back along
// it, which `vegeta plot` needs: each is the actual send, or the latest
// send of a lower Seq where that came later (another loop, a re-send).
// The plot library itself takes every result.
func TestResultsBinPlots(t *testing.T) {
	res, dir := runMixedToDir(t, config.LatencyUncorrected)
	got := readResults(t, filepath.Join(dir, record.ResultsFile))
	require.Len(t, got, int(res.Sent))
	sent := map[uint64]time.Time{}
	for _, rc := range res.Records {
		sent[rc.Seq] = res.Start.Add(time.Duration(rc.Sent))
	}
	var latest time.Time
	p := plot.New(plot.Title("t"))
	for i, r := range got {
		if i > 0 {
			assert.Greater(t, r.Seq, got[i-1].Seq, "results.bin is in Seq order")
		}
		if sent[r.Seq].After(latest) {
			latest = sent[r.Seq]
		}
		assert.True(t, r.Timestamp.Equal(latest), "seq %d: the latest send so far", r.Seq)
		require.NoError(t, p.Add(&r), "vegeta plot takes result %d", i)
	}
}

// With -vegeta-latency corrected, timestamps are the intended sends and
// latencies the corrected ones, so vegeta's plot shows the truth.
func TestResultsBinCorrected(t *testing.T) {
	res, dir := runMixedToDir(t, config.LatencyCorrected)
	got := readResults(t, filepath.Join(dir, record.ResultsFile))
	require.Len(t, got, int(res.Sent))
	s := schedule.New(res.Config.Rate)
	for _, r := range got {
		assert.True(t, r.Timestamp.Equal(res.Start.Add(time.Duration(s.At(r.Seq)))), "seq %d: timestamp is the intended send", r.Seq)
	}
	var rec record.Record
	for _, rc := range res.Records {
		if rc.Seq == got[0].Seq {
			rec = rc
		}
	}
	assert.Equal(t, time.Duration(rec.End()-rec.Intended), got[0].Latency, "latency is the corrected one")
}

// The interval logs read back through hdrhistogram-go's log reader: one
// histogram per interval, nanoseconds, together holding every response,
// and the per-interval series agrees with them.
func TestIntervalLogsRoundTripThroughTheLogReader(t *testing.T) {
	res, dir := runMixedToDir(t, config.LatencyUncorrected)
	require.NotEmpty(t, res.Intervals)
	for _, name := range []string{record.CorrectedLogFile, record.UncorrectedLogFile} {
		hs, err := record.ReadIntervalLog(filepath.Join(dir, name))
		require.NoError(t, err)
		require.Len(t, hs, len(res.Intervals), name)
		var total int64
		for i, h := range hs {
			total += h.TotalCount()
			assert.Equal(t, res.Intervals[i].Responses, h.TotalCount(), "%s interval %d", name, i)
			if i > 0 {
				assert.InDelta(t, hs[i-1].EndTimeMs(), h.StartTimeMs(), 1, "%s: intervals follow each other (ms, rounded by the format)", name)
			}
		}
		assert.Equal(t, res.Sent, total, "%s holds every response", name)
		assert.InDelta(t, res.Start.UnixMilli(), hs[0].StartTimeMs(), 1, "%s: the first interval starts with the run", name)
	}
	hs, err := record.ReadIntervalLog(filepath.Join(dir, record.CorrectedLogFile))
	require.NoError(t, err)
	var responses int64
	for i, p := range res.Intervals {
		responses += p.Responses
		assert.Equal(t, float64(hs[i].Max())/1e3, p.MaxUs, "interval %d", i)
		assert.InDelta(t, float64(i)*0.1, p.StartS, 1e-9)
	}
	assert.Equal(t, res.Sent, responses)
	// The whole run's corrected histogram (µs) and the intervals' (ns)
	// agree, within the histograms' precision, on the max.
	var maxUs float64
	for _, p := range res.Intervals {
		maxUs = max(maxUs, p.MaxUs)
	}
	assert.InEpsilon(t, float64(res.Corrected.Max()), maxUs, 0.01)
}

func TestNoResultsFileWithoutKeepResults(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(loadgentest.ServeHandler(t, bareserver.Handler), 500, 100*time.Millisecond)
	cfg.KeepResults, cfg.Out = false, dir
	res := run(t, cfg)
	require.NoError(t, res.OutputErr)
	assert.NoFileExists(t, filepath.Join(dir, record.ResultsFile))
	assert.FileExists(t, filepath.Join(dir, record.CorrectedLogFile))
}

// The collector keeps memory bounded: 300k records through one recorder
// (17 MB were they kept) leave the heap where a thousand left it, give or
// take the chunks in flight: no per-request state outlives its interval.
func TestCollectorMemoryIsBounded(t *testing.T) {
	heapAfter := func(n int) uint64 {
		cfg := config.Default()
		cfg.Out, cfg.KeepResults = t.TempDir(), false
		col := record.NewCollector(&cfg)
		rec := col.NewRecorder()
		o := record.Outcome{Op: api.Get, Code: 200, BytesIn: 10}
		for i := 0; i < n; i++ {
			o.Seq, o.Key = uint64(i), uint64(i)
			o.Intended = int64(i) * 10_000 // 100k req/s
			o.Sent, o.End = o.Intended+1_000, o.Intended+50_000
			rec.Add(&o)
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		res := &record.Result{Config: cfg, Start: time.Now()}
		col.Finish(res)
		require.NoError(t, res.OutputErr)
		require.Equal(t, int64(n), res.Sent)
		require.Nil(t, res.Records, "nothing kept in memory")
		return ms.HeapInuse
	}
	small := heapAfter(1_000)
	large := heapAfter(300_000)
	assert.Less(t, large, small+6<<20, "heap in use after 300k records (%d B) vs 1k (%d B)", large, small)
}

// The HostClient transport answers the same workload as the raw one.
func TestHostClientTransport(t *testing.T) {
	cfg := testConfig(loadgentest.ServeHandler(t, loadgentest.MixedStatuses), 500, 300*time.Millisecond)
	cfg.Transport = config.TransportHostClient
	cfg.Workload.Mix = workload.Mix{Get: 0.5, Put: 0.5}
	res := run(t, cfg)
	assert.Equal(t, int64(150), res.Sent)
	assert.Zero(t, res.ErrorCount)
	assert.Equal(t, int64(150), res.Codes[200]+res.Codes[404]+res.Codes[201])
	assert.Positive(t, res.Codes[201])
}
