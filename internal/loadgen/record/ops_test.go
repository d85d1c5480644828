package record

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
)

// A mix's operations are counted apart, in the whole run and in each
// interval, and their parts sum to the whole: responses, status codes,
// errors and 503s; each one's latencies are its own. Synthetic records
// with known times go through a recorder, as an engine's do.
func TestOpsOfAMixSumToTheRun(t *testing.T) {
	const ms = int64(time.Millisecond)
	cfg := config.Default()
	cfg.Workload.Mix = workload.Mix{Get: 0.5, Put: 0.4, Delete: 0.1}
	cfg.Interval, cfg.Out, cfg.KeepResults = 100*time.Millisecond, t.TempDir(), false
	rec := NewCollector(&cfg).NewRecorder()
	seq := uint64(0)
	add := func(op api.Method, code int, err error, sent, latency int64) {
		o := Outcome{Seq: seq, Op: op, Code: code, Err: err, Intended: sent, Sent: sent, End: sent + latency}
		seq++
		rec.Add(&o)
	}
	// Interval 0: GETs answered in 1 ms (one 404), PUTs in 20 ms, one
	// DELETE in 3 ms.
	for i := range int64(8) {
		code := 200
		if i == 7 {
			code = 404
		}
		add(api.Get, code, nil, (10+i)*ms, ms)
		add(api.Put, 201, nil, (10+i)*ms, 20*ms)
	}
	add(api.Delete, 202, nil, 20*ms, 3*ms)
	// Interval 1: PUTs refused (503) at once, GETs still 1 ms, one GET
	// that failed on the wire.
	for i := range int64(5) {
		add(api.Put, 503, nil, (110+i)*ms, ms/2)
		add(api.Get, 200, nil, (110+i)*ms, ms)
	}
	add(api.Get, 0, errors.New("connection reset by server"), 150*ms, ms)
	res := &Result{Config: cfg, Start: time.Now()}
	rec.col.Finish(res)
	require.NoError(t, res.OutputErr)

	require.Len(t, res.Ops, 3, "GET, PUT and DELETE, in that order")
	get, put, del := res.Op(api.Get), res.Op(api.Put), res.Op(api.Delete)
	require.NotNil(t, get)
	require.NotNil(t, put)
	require.NotNil(t, del)
	assert.Equal(t, []api.Method{api.Get, api.Put, api.Delete}, []api.Method{res.Ops[0].Op, res.Ops[1].Op, res.Ops[2].Op})
	assert.Equal(t, int64(14), get.Sent)
	assert.Equal(t, int64(13), put.Sent)
	assert.Equal(t, int64(1), del.Sent)
	assert.Equal(t, map[int]int64{200: 12, 404: 1, 0: 1}, get.Codes)
	assert.Equal(t, map[int]int64{201: 8, 503: 5}, put.Codes)
	assert.Equal(t, map[int]int64{202: 1}, del.Codes)
	assert.Equal(t, int64(5), put.Shed())
	assert.Equal(t, int64(1), get.ErrorCount, "a 404 on GET is an answer; the reset is an error")
	assert.Equal(t, map[string]int64{"connection reset by server": 1}, get.Errors)
	assert.Equal(t, int64(5), put.ErrorCount, "503s are errors")
	assert.InDelta(t, 1000, get.Corrected.ValueAtPercentile(99), 10, "GETs: 1 ms")
	assert.InDelta(t, 20_000, put.Corrected.ValueAtPercentile(99), 50, "PUTs: 20 ms")
	assert.InDelta(t, 3000, del.Uncorrected.Max(), 10, "the DELETE: 3 ms")

	var sent, errs int64
	codes := map[int]int64{}
	for _, o := range res.Ops {
		sent += o.Sent
		errs += o.ErrorCount
		assert.Equal(t, o.Sent, o.Corrected.TotalCount(), "%v", o.Op)
		for c, n := range o.Codes {
			codes[c] += n
		}
	}
	assert.Equal(t, res.Sent, sent, "responses sum to the run's")
	assert.Equal(t, res.ErrorCount, errs, "errors sum to the run's")
	assert.Equal(t, res.Codes, codes, "status codes sum to the run's")

	require.Len(t, res.Intervals, 2)
	assert.Equal(t, []int64{0, 5}, []int64{res.Intervals[0].Shed, res.Intervals[1].Shed}, "503s per interval, in every run")
	for i, p := range res.Intervals {
		require.Len(t, p.Ops, 3, "interval %d: every operation of the mix, 0s where none ended", i)
		var n, e, shed int64
		for _, o := range p.Ops {
			n += o.Responses
			e += o.Errors
			shed += o.Shed
		}
		assert.Equal(t, p.Responses, n, "interval %d: responses sum", i)
		assert.Equal(t, p.Errors, e, "interval %d: errors sum", i)
		assert.Equal(t, p.Shed, shed, "interval %d: 503s sum", i)
	}
	first, second := res.Intervals[0].Ops, res.Intervals[1].Ops
	last := res.Intervals[1].LengthS // the last interval ends with the last response
	assert.Equal(t, OpInterval{Responses: 8, Rate: 80, P99Us: 1000}, roundP99(first["get"]))
	assert.Equal(t, OpInterval{Responses: 8, Rate: 80, P99Us: 20_000}, roundP99(first["put"]))
	assert.Equal(t, OpInterval{Responses: 1, Rate: 10, P99Us: 3000}, roundP99(first["delete"]))
	assert.Equal(t, OpInterval{Responses: 5, Rate: 5 / last, Errors: 5, Shed: 5, P99Us: 500}, roundP99(second["put"]))
	assert.Equal(t, OpInterval{Responses: 6, Rate: 6 / last, Errors: 1, P99Us: 1000}, roundP99(second["get"]))
	assert.Equal(t, OpInterval{}, second["delete"])

	for _, op := range Ops {
		hs, err := ReadIntervalLog(filepath.Join(cfg.Out, OpLogFile(op)))
		require.NoError(t, err, "%v's interval log", op)
		require.Len(t, hs, 2, "%v: one histogram per interval", op)
		assert.Equal(t, res.Intervals[0].Ops[OpName(op)].Responses, hs[0].TotalCount(), "%v", op)
	}
}

// roundP99 is o with its p99 rounded to the histogram's 3 digits.
func roundP99(o OpInterval) OpInterval {
	switch {
	case o.P99Us >= 10_000:
		o.P99Us = float64(int64(o.P99Us/100+0.5) * 100)
	default:
		o.P99Us = float64(int64(o.P99Us/10+0.5) * 10)
	}
	return o
}

// A run of one operation keeps no per-operation state: its one
// operation's figures are the run's, and its series has no parts.
func TestOpsOfOneOperationAreTheRun(t *testing.T) {
	cfg := config.Default()
	cfg.Workload.Mix = workload.Put
	cfg.Interval, cfg.Out, cfg.KeepResults = 100*time.Millisecond, t.TempDir(), false
	col := NewCollector(&cfg)
	assert.False(t, col.perOp)
	rec := col.NewRecorder()
	for i := range int64(10) {
		o := Outcome{Seq: uint64(i), Op: api.Put, Code: 201, Intended: i * int64(time.Millisecond), Sent: i * int64(time.Millisecond), End: (i + 2) * int64(time.Millisecond)}
		rec.Add(&o)
	}
	res := &Result{Config: cfg, Start: time.Now()}
	col.Finish(res)
	require.Len(t, res.Ops, 1)
	o := res.Ops[0]
	assert.Equal(t, api.Put, o.Op)
	assert.Equal(t, res.Sent, o.Sent)
	assert.Same(t, res.Corrected, o.Corrected)
	assert.Equal(t, res.Codes, o.Codes)
	for _, p := range res.Intervals {
		assert.Nil(t, p.Ops)
	}
	_, err := os.Stat(filepath.Join(cfg.Out, OpLogFile(api.Put)))
	assert.True(t, os.IsNotExist(err), "no per-operation log: the run's own is it")
}

// A record of an operation the mix does not send leaves the
// per-operation figures out, rather than parts that do not add up.
func TestOpsLeftOutWhereARecordIsOutsideTheMix(t *testing.T) {
	cfg := config.Default() // GETs only
	cfg.Interval, cfg.Out, cfg.KeepResults = 100*time.Millisecond, "", false
	rec := NewCollector(&cfg).NewRecorder()
	for i, op := range []api.Method{api.Get, api.Put} {
		o := Outcome{Seq: uint64(i), Op: op, Code: 200, Intended: 0, Sent: 0, End: int64(time.Millisecond)}
		rec.Add(&o)
	}
	res := &Result{Config: cfg, Start: time.Now()}
	rec.col.Finish(res)
	assert.Equal(t, int64(2), res.Sent)
	assert.Nil(t, res.Ops)
}
