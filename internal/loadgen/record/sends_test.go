package record

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/latency"
	"github.com/kvpool/kvpool/internal/loadgen/config"
)

// The series counts sends by send time and answers by end time, and from
// them the requests in flight at each interval's end; the send lag's p99
// is of the requests sent in the interval. Records with known times go
// through a recorder into the collector, as an engine's do.
func TestSeriesCountsSendsLagAndInFlight(t *testing.T) {
	const ms = int64(time.Millisecond)
	cfg := config.Default()
	cfg.Interval, cfg.Out, cfg.KeepResults = 100*time.Millisecond, "", false
	rec := NewCollector(&cfg).NewRecorder()
	add := func(seq uint64, intended, sent, end int64) {
		o := Outcome{Seq: seq, Op: api.Get, Code: 200, Intended: intended, Sent: sent, End: end}
		rec.Add(&o)
	}
	// Interval 0: nine requests sent on time, each answered 5 ms later.
	for i := range int64(9) {
		add(uint64(i), (10+10*i)*ms, (10+10*i)*ms, (15+10*i)*ms)
	}
	// Interval 1: five sent 20 ms late, answered only in interval 2.
	for i := range int64(5) {
		sent := (110 + 10*i) * ms
		add(uint64(9+i), sent-20*ms, sent, 250*ms+i*ms)
	}
	// Interval 3: one on time, answered at once.
	add(14, 310*ms, 310*ms, 311*ms)
	res := &Result{Config: cfg, Start: time.Now()}
	rec.col.Finish(res)

	require.Len(t, res.Intervals, 4)
	type row struct {
		Responses, Sent, InFlight int64
		Conns                     int
	}
	var rows []row
	for _, p := range res.Intervals {
		rows = append(rows, row{p.Responses, p.Sent, p.InFlight, p.Conns})
	}
	assert.Equal(t, []row{{9, 9, 0, 1}, {0, 5, 5, 1}, {5, 0, 0, 1}, {1, 1, 0, 1}}, rows)
	assert.LessOrEqual(t, res.Intervals[0].SendLagP99Us, 1.0, "sent on time")
	assert.InEpsilon(t, 20_000, res.Intervals[1].SendLagP99Us, 0.02, "sent 20 ms late")
	assert.Zero(t, res.Intervals[2].SendLagP99Us, "nothing sent in it")
}

// A send interval's lag histogram closes once no response of it can
// still come (the timeout and a grace interval past it), so a long run
// holds only a few open; what closed keeps its p99.
func TestSendLagHistogramsCloseAfterTheTimeout(t *testing.T) {
	s := sendSeries{interval: int64(time.Second), grace: lagGrace(2*time.Second, time.Second)}
	assert.Equal(t, int64(3), s.grace)
	assert.Equal(t, int64(3), lagGrace(10*time.Second, time.Second), "at most 2 s")
	assert.Equal(t, int64(11), lagGrace(10*time.Second, 200*time.Millisecond))
	for k := range int64(100) {
		sent := k * int64(time.Second)
		s.record(sent, sent+int64(time.Millisecond), k*int64(time.Millisecond), false)
		s.closeThrough(k - 2) // as the collector's ticker does
		assert.LessOrEqual(t, len(s.open), 6, "second %d", k)
	}
	s.closeThrough(finalInterval)
	require.Equal(t, int64(100), s.next, "every one closed")
	require.Len(t, s.ivs, 100)
	assert.Empty(t, s.open)
	for k, iv := range s.ivs {
		assert.InDelta(t, float64(max(k*1000, 1)), iv.lagP99, float64(k*1000)*0.01+1, "second %d", k)
	}
}

// Conns counts the connections opened by each interval's end.
func TestSeriesCountsConnectionsByTheirOpening(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := sendSeries{interval: int64(time.Second)}
	series := make([]Interval, 3)
	conns := []time.Time{start.Add(-time.Millisecond), start.Add(-time.Millisecond), start.Add(1500 * time.Millisecond), start.Add(2 * time.Second)}
	var got []int
	for _, p := range s.fill(series, start, conns) {
		got = append(got, p.Conns)
	}
	assert.Equal(t, []int{2, 4, 4}, got, "opened before the start, in the second interval, at its very end")
}

// The loader's own lag is the lag of the sends that found a connection
// free; a send or an expiry that waited for one counts in ConnWaits, by
// when it was sent or expired, and in no own-lag figure.
func TestSeriesTellsConnectionWaitsFromTheLoadersOwnLag(t *testing.T) {
	const ms = int64(time.Millisecond)
	cfg := config.Default()
	cfg.Interval, cfg.Out, cfg.KeepResults = 100*time.Millisecond, "", false
	cfg.Client.Timeout = 50 * time.Millisecond
	rec := NewCollector(&cfg).NewRecorder()
	add := func(seq uint64, intended, sent, end int64, flags uint8) {
		o := Outcome{Seq: seq, Op: api.Get, Code: 200, Intended: intended, Sent: sent, End: end, Flags: flags}
		rec.Add(&o)
	}
	// Interval 0: three sent 5 ms late with a connection free, two 30 ms
	// late after waiting for one.
	for i := range int64(3) {
		add(uint64(i), 10*ms, 15*ms, 20*ms, 0)
	}
	add(3, 10*ms, 40*ms, 45*ms, FlagConnWait)
	add(4, 10*ms, 40*ms, 45*ms, FlagConnWait)
	// Interval 1: one expired unsent after waiting for a connection, one
	// sent on time.
	add(5, 60*ms, 110*ms, 110*ms, FlagConnWait|FlagNotSent|FlagTimeout)
	add(6, 150*ms, 150*ms, 151*ms, 0)
	res := &Result{Config: cfg, Start: time.Now()}
	rec.col.Finish(res)

	require.Len(t, res.Intervals, 2)
	assert.Equal(t, int64(3), res.ConnWaits)
	assert.Equal(t, int64(3), res.OwnLate, "the three sent 5 ms late with a connection free")
	assert.Equal(t, int64(5), res.Late)
	assert.Equal(t, []int64{2, 1}, []int64{res.Intervals[0].ConnWaits, res.Intervals[1].ConnWaits})
	assert.InEpsilon(t, 5_000, res.Intervals[0].OwnLagP99Us, 0.02, "the own lag leaves out the 30 ms waits")
	assert.InEpsilon(t, 30_000, res.Intervals[0].SendLagP99Us, 0.02, "the send lag holds them")
	assert.LessOrEqual(t, res.Intervals[1].OwnLagP99Us, 1.0, "sent on time")
}

// The warning about late sends says whose lag it was, where the engine
// told them apart.
func TestLateWarningSaysWhoseLagItWas(t *testing.T) {
	cfg := config.Default()
	cfg.Rate, cfg.Duration = 1000, time.Second
	r := &Result{Config: cfg, Elapsed: time.Second, Sent: 1000, Late: 100, OwnLate: 30, OwnLagKnown: true, SendLag: latency.New()}
	assert.Contains(t, strings.Join(r.Warnings(), "\n"), "100 requests (10.00%) were sent more than 1ms behind schedule (send lag p99 0.00us, max 0.00us; 70 of them waited for a connection (every one busy on the server, or being dialled again), 30 were the loader's own lag)")
	r.OwnLagKnown = false
	assert.NotContains(t, strings.Join(r.Warnings(), "\n"), "waited for a connection")
}
