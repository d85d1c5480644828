package loadgen

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	vegeta "github.com/tsenart/vegeta/v12/lib"
	"github.com/valyala/fasthttp"

	"github.com/kvpool/kvpool/internal/loadgen/bareserver"
)

// mixedServer answers GET 200 for even ids, 404 for odd ones, PUT 201.
func mixedServer(ctx *fasthttp.RequestCtx) {
	id := ctx.QueryArgs().GetUintOrZero("id")
	switch {
	case ctx.IsPut():
		ctx.SetStatusCode(fasthttp.StatusCreated)
	case id%2 == 0:
		ctx.SetBodyString("v")
	default:
		ctx.SetStatusCode(fasthttp.StatusNotFound)
	}
}

func runMixedToDir(t *testing.T) (*Result, string) {
	t.Helper()
	cfg := testConfig(serve(t, mixedServer), 1000, 300*time.Millisecond)
	cfg.Workload.ReadShare = 0.5
	res := run(t, cfg)
	dir := t.TempDir()
	require.NoError(t, res.WriteFiles(dir))
	return res, dir
}

// results.bin is vegeta's gob format: vegeta's decoders read back one
// Result per request with the same codes, latencies and send times, and
// vegeta's metrics agree with our counts.
func TestResultsBinRoundTripsThroughVegetasDecoder(t *testing.T) {
	res, dir := runMixedToDir(t)
	f, err := os.Open(filepath.Join(dir, ResultsFile))
	require.NoError(t, err)
	defer f.Close()

	dec := vegeta.DecoderFor(f) // what `vegeta report` does: sniff the format
	require.NotNil(t, dec, "vegeta does not recognise results.bin")
	var got []vegeta.Result
	var m vegeta.Metrics
	for {
		var r vegeta.Result
		err := dec.Decode(&r)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		got = append(got, r)
		m.Add(&r)
	}
	m.Close()

	require.Len(t, got, int(res.Sent))
	assert.Equal(t, uint64(res.Sent), m.Requests)
	codes := map[int]int64{}
	for i, r := range got {
		codes[int(r.Code)]++
		rc := res.records[i]
		assert.Equal(t, rc.seq, r.Seq)
		assert.Equal(t, time.Duration(rc.latency), r.Latency)
		assert.True(t, r.Timestamp.Equal(res.Start.Add(time.Duration(rc.sent))), "timestamp is the actual send")
		assert.Equal(t, res.Config.Name, r.Attack)
		assert.Contains(t, []string{"GET", "PUT"}, r.Method)
		assert.True(t, strings.HasPrefix(r.URL, res.Config.Target+"/v0/entity?id="), r.URL)
		assert.Equal(t, r.URL, res.Config.Target+"/v0/entity?id="+itoa(rc.key))
		if i > 0 {
			assert.False(t, r.Timestamp.Before(got[i-1].Timestamp), "results are in send order")
		}
		assert.Empty(t, r.Error, "404 on GET and 2xx are not errors")
	}
	assert.Equal(t, res.Codes, codes)
	assert.Greater(t, codes[404], int64(0))
	assert.Greater(t, codes[201], int64(0))
}

func TestSummaryJSON(t *testing.T) {
	res, dir := runMixedToDir(t)
	b, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	require.NoError(t, err)

	var s Summary
	require.NoError(t, json.Unmarshal(b, &s))
	assert.Equal(t, "fast", s.Engine)
	assert.Equal(t, "raw", s.Transport)
	assert.Equal(t, "mixed:0.5", s.Workload)
	assert.Equal(t, 1000.0, s.AskedRate)
	assert.Equal(t, uint64(300), s.Planned)
	assert.Equal(t, int64(300), s.Sent)
	assert.Zero(t, s.Unsent)
	assert.Equal(t, res.Codes[200]+res.Codes[404]+res.Codes[201], s.StatusCodes["200"]+s.StatusCodes["404"]+s.StatusCodes["201"])
	assert.Equal(t, int64(300), s.StatusCodes["200"]+s.StatusCodes["404"]+s.StatusCodes["201"])
	assert.Zero(t, s.Errors)
	assert.Positive(t, s.LoaderCPUPerReqUs)
	assert.NotNil(t, s.Warnings)

	// Every wrk2 percentile, in order, for both distributions.
	for _, l := range []struct {
		name string
		sum  map[string]float64
	}{{"corrected", s.Corrected.Pct}, {"uncorrected", s.Uncorrected.Pct}} {
		prev := 0.0
		for _, k := range []string{"p50", "p75", "p90", "p99", "p99.9", "p99.99", "p99.999", "p100"} {
			v, ok := l.sum[k]
			require.True(t, ok, "%s lacks %s", l.name, k)
			assert.GreaterOrEqual(t, v, prev, "%s %s", l.name, k)
			prev = v
		}
	}
	assert.Equal(t, int64(300), s.Corrected.Count)
	assert.GreaterOrEqual(t, s.Corrected.Pct["p99"], s.Uncorrected.Pct["p99"])

	// And the raw JSON uses the documented names.
	var raw map[string]any
	require.NoError(t, json.Unmarshal(b, &raw))
	for _, k := range []string{"asked_rate", "achieved_rate", "latency_corrected", "latency_uncorrected", "status_codes", "loader_cpu_per_request_us", "warnings"} {
		assert.Contains(t, raw, k)
	}

	for _, name := range []string{CorrectedFile, UncorrectedFile} {
		h, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(string(h), "       Value   Percentile   TotalCount 1/(1-Percentile)\n"), name)
		assert.Contains(t, string(h), "Total count    =          300]", name)
	}
}

func TestNoResultsFileWithoutKeepResults(t *testing.T) {
	cfg := testConfig(serve(t, bareserver.Handler), 500, 100*time.Millisecond)
	cfg.KeepResults = false
	res := run(t, cfg)
	dir := t.TempDir()
	require.NoError(t, res.WriteFiles(dir))
	assert.NoFileExists(t, filepath.Join(dir, ResultsFile))
	assert.FileExists(t, filepath.Join(dir, SummaryFile))
}

// The vegeta engine records the same things through vegeta's attacker.
func TestVegetaEngineRecordsBothDistributions(t *testing.T) {
	cfg := testConfig(serve(t, mixedServer), 500, 400*time.Millisecond)
	cfg.Engine = EngineVegeta
	cfg.Workload.ReadShare = 0.5
	res := run(t, cfg)
	assert.Equal(t, int64(200), res.Sent)
	assert.Zero(t, res.ErrorCount)
	assert.Equal(t, int64(200), res.Corrected.TotalCount())
	assert.Equal(t, int64(200), res.Uncorrected.TotalCount())
	assert.Equal(t, int64(200), res.Codes[200]+res.Codes[404]+res.Codes[201])
	assert.Len(t, res.records, 200)
}

func itoa(k uint64) string {
	b, _ := json.Marshal(k)
	return string(b)
}

// The HostClient transport answers the same workload as the raw one.
func TestHostClientTransport(t *testing.T) {
	cfg := testConfig(serve(t, mixedServer), 500, 300*time.Millisecond)
	cfg.Transport = TransportHostClient
	cfg.Workload.ReadShare = 0.5
	res := run(t, cfg)
	assert.Equal(t, int64(150), res.Sent)
	assert.Zero(t, res.ErrorCount)
	assert.Equal(t, int64(150), res.Codes[200]+res.Codes[404]+res.Codes[201])
	assert.Positive(t, res.Codes[201])
}
