package record

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/kvpool/kvpool/internal/latency"
	"github.com/kvpool/kvpool/internal/loadgen/config"
)

// chunkLen is how many records a recorder gathers before it hands them to
// the collector; with the per-interval swap it bounds what a connection
// holds back.
const chunkLen = 256

// chunksInFlight bounds the full chunks waiting for the collector and the
// empty ones kept for reuse: beyond it a recorder waits (full) or the
// garbage collector takes the chunk (free), so memory stays bounded.
const chunksInFlight = 64

// chunk is a batch of records on its way from a recorder to the collector.
type chunk struct{ recs []Record }

// Collector is the one consumer of every recorder of a run. Its goroutine
// receives full chunks as they come and, once per interval, takes what
// each recorder has gathered since; it keeps the run's histograms and
// counters, closes each interval of the latency logs once every response
// of it has arrived, and spools every record to disk for results.bin. So
// memory stays bounded however long the run: a few open intervals, a
// chunk per connection, and buffers.
//
// Locks: collector.mu (the list of recorders, when each was registered,
// and the reconnects), each recorder's mu (its chunk) and errorTable.mu; no two
// are ever held together.
type Collector struct {
	interval int64 // ns
	out      string
	results  bool // write results.bin into out
	inMemory bool // keep every record in memory (tests)

	errors errorTable
	full   chan *chunk
	free   chan *chunk

	mu         sync.Mutex
	recs       []*Recorder
	regAt      []time.Time // when each recorder (a connection) was registered
	reconnects []int64     // by interval (Reconnected)

	once  sync.Once
	began bool          // the goroutine was started (read after stop)
	stop  chan struct{} // closed by finish
	done  chan struct{} // closed when the goroutine has returned
	start time.Time     // wall clock of the run's start, to a few µs

	// Owned by the goroutine while it runs, by finish afterwards.
	all                tally
	sendLag            *hdrhistogram.Histogram // µs
	late               int64
	connWaits, ownLate int64
	lastSent, lastEnd  int64
	bytesIn, bytesOut  int64
	open               []*interval
	next               int64 // index of the first interval not yet closed
	spare              []*interval
	series             []Interval
	logs               [2]*IntervalLog // corrected, uncorrected
	sends              sendSeries
	spool              *spoolWriter
	records            []Record
	err                error        // the first file error
	clients            *clientStats // nil without a client model

	// Per operation (ops.go). opsInMix are the operations the workload
	// sends; perOp: more than one, so that each gets figures of its own
	// (a run of one operation keeps none: its figures are the run's).
	// opsSeen has bit op set for every operation recorded.
	opsInMix opSet
	perOp    bool
	opsSeen  opSet
	ops      [numOps]tally
	opLogs   [numOps]*IntervalLog // corrected, per operation (perOp)
}

// interval gathers the responses that ended within one -interval.
type interval struct {
	ivTally
	uncorrected *hdrhistogram.Histogram // ns
	ops         [numOps]ivTally         // Collector.perOp
}

// Interval is one -interval of a run: what summary.json's series and the
// report's latency-over-time chart show, and what a saturation search
// judges second by second. Responses, Errors and the (corrected)
// latencies are of the responses that ended in the interval. A merged
// run (loadtest merge) has only the first group, ConnWaits, Reconnects,
// Shed and Ops: the others are 0 there.
type Interval struct {
	StartS    float64 `json:"t_s"` // seconds since the run's start
	LengthS   float64 `json:"length_s"`
	Responses int64   `json:"responses"`
	Rate      float64 `json:"rate"` // responses per second
	Errors    int64   `json:"errors"`
	P50Us     float64 `json:"p50_us"`
	P99Us     float64 `json:"p99_us"`
	MaxUs     float64 `json:"max_us"`
	// Sent counts the requests whose first byte was written in the
	// interval, whatever became of them: beside the asked rate it shows
	// whether the loader kept to the schedule that second.
	Sent int64 `json:"sent"`
	// SendLagP99Us is the p99 of how late those requests were sent
	// (actual send − intended send), µs, to 2 significant digits.
	SendLagP99Us float64 `json:"send_lag_p99_us"`
	// InFlight is how many requests were sent and not answered by the
	// interval's end: with SendLagP99Us, the backlog a server that falls
	// behind builds up (in flight while the loader has connections to
	// spare, then send lag).
	InFlight int64 `json:"in_flight"`
	Conns    int   `json:"conns"` // connections opened by the interval's end

	// The loader's own evidence (the fast engine's event loop; 0
	// elsewhere, see Result.OwnLagKnown): ConnWaits counts the attempts
	// sent or expired unsent in the interval that had waited for a
	// connection (FlagConnWait): their lag is the server's doing.
	// OwnLagP99Us is the p99 send lag (µs, 2 significant digits) of the
	// attempts sent in it that did not: how late the loader itself was.
	// Reconnects counts the connections dialled again in it (the server
	// closed one, or a client gave up on an answer and closed it).
	ConnWaits   int64   `json:"conn_waits,omitempty"`
	OwnLagP99Us float64 `json:"own_lag_p99_us,omitempty"`
	Reconnects  int64   `json:"reconnects,omitempty"`

	// What the clients did (Config.Client, see ClientTotals), of the
	// attempts sent or refused in the interval (Sent = FirstTries +
	// Retries), and of those that ended in it (Useful, Timeouts, GaveUp).
	FirstTries int64 `json:"first_tries,omitempty"`
	Retries    int64 `json:"retries,omitempty"`
	Throttled  int64 `json:"throttled,omitempty"`
	Useful     int64 `json:"useful,omitempty"`
	Timeouts   int64 `json:"timeouts,omitempty"`
	// Shed counts the responses that ended in the interval with a 503
	// (the server's admission refused them), of every run, with a client
	// model or without: counted in Errors too.
	Shed   int64 `json:"shed,omitempty"`
	GaveUp int64 `json:"gave_up,omitempty"`
	// UsefulP99Us is the p99 of the useful answers' latency from their
	// attempt's send, µs (the served requests' p99).
	UsefulP99Us float64 `json:"useful_p99_us,omitempty"`

	// Ops is, in a run of several operations (a mix), each one's part of
	// the interval's responses, keyed "get", "put", "delete" (OpName);
	// every operation of the mix has one, 0s where none ended in it. Their
	// Responses, Errors and 503s sum to the interval's. Nil in a run of
	// one operation, whose figures are the interval's own.
	Ops map[string]OpInterval `json:"ops,omitempty"`
}

// Interval histograms hold nanoseconds, the unit the HdrHistogram log
// tools assume (they print Interval_Max in ms by dividing by 1e6), over the
// same range and precision as the run's µs histograms.
const (
	intervalMinNs = 1_000
	intervalMaxNs = 60_000_000_000
)

// NewCollector returns the collector of the run cfg configures: every
// recorder of the run comes from it (NewRecorder).
func NewCollector(cfg *config.Config) *Collector {
	iv := cfg.SeriesInterval()
	c := &Collector{
		interval: int64(iv), out: cfg.Out, results: cfg.Out != "" && cfg.KeepResults, inMemory: cfg.KeepRecords,
		full: make(chan *chunk, chunksInFlight), free: make(chan *chunk, chunksInFlight),
		stop: make(chan struct{}), done: make(chan struct{}),
		all: tally{uncorrected: latency.New(), corrected: latency.New()}, sendLag: latency.New(),
		sends: sendSeries{interval: int64(iv), grace: lagGrace(cfg.Timeout, iv)},
	}
	if !cfg.Client.IsZero() {
		c.clients = &clientStats{interval: int64(iv)}
	}
	c.opsInMix = mixOps(cfg.Workload)
	c.perOp = c.opsInMix.len() > 1
	return c
}

func (c *Collector) newChunk() *chunk {
	select {
	case ch := <-c.free:
		return ch
	default:
		return &chunk{recs: make([]Record, 0, chunkLen)}
	}
}

func (c *Collector) recycle(ch *chunk) {
	ch.recs = ch.recs[:0]
	select {
	case c.free <- ch:
	default:
	}
}

// register adds r to the recorders swapped each interval, and a spare
// chunk to the free list (while it has room), so that a recorder handing
// over a full chunk finds an empty one without allocating.
func (c *Collector) register(r *Recorder) {
	c.mu.Lock()
	c.recs = append(c.recs, r)
	c.regAt = append(c.regAt, time.Now())
	c.mu.Unlock()
	c.recycle(&chunk{recs: make([]Record, 0, chunkLen)})
}

// Reconnected counts a connection dialled again at (ns since the start):
// the server closed it, or a request on it failed. A reconnect costs a
// dial; the lock is nothing beside it.
func (c *Collector) Reconnected(at int64) {
	i := max(at, 0) / c.interval
	c.mu.Lock()
	c.reconnects = grow(c.reconnects, i)
	c.reconnects[i]++
	c.mu.Unlock()
}

// Started tells the collector when the run started, the instant every
// Outcome's times count from, before the first outcome is added: its
// interval logs and series are then stamped from the same clock reading
// as the Result's Start.
func (c *Collector) Started(start time.Time) { c.start = start }

// startOnce starts the goroutine and opens the files at the first
// outcome, which ended endNs after the start: a run that never gets going
// (nothing listens) leaves neither behind. Where Started was not called,
// the start is read back from the clock, late by however long the
// outcome took to arrive here.
func (c *Collector) startOnce(endNs int64) {
	c.once.Do(func() {
		if c.start.IsZero() {
			c.start = time.Now().Add(-time.Duration(endNs))
		}
		c.openFiles()
		c.began = true
		go c.loop()
	})
}

func (c *Collector) openFiles() {
	if c.out == "" {
		return
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		c.fail(fmt.Errorf("cannot create output directory: %w", err))
		return
	}
	c.logs = [2]*IntervalLog{c.createLog(CorrectedLogFile, "corrected"), c.createLog(UncorrectedLogFile, "uncorrected")}
	if c.perOp {
		c.openOpLogs()
	}
	if c.results {
		sp, err := createSpool(filepath.Join(c.out, SpoolFile))
		if err != nil {
			c.fail(err)
			return
		}
		c.spool = sp
	}
}

// fail keeps err (nil: none) unless an error came before.
func (c *Collector) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// createLog creates the interval log name in the run's folder; what names
// its latency. Nil where it could not (fail keeps why).
func (c *Collector) createLog(name, what string) *IntervalLog {
	l, err := CreateIntervalLog(filepath.Join(c.out, name), c.start, what)
	c.fail(err)
	return l
}

// writeLog appends h as the interval [startNs, startNs+lengthNs) to l,
// unless l is nil (it could not be created).
func (c *Collector) writeLog(l *IntervalLog, h *hdrhistogram.Histogram, startNs, lengthNs int64) {
	if l != nil {
		c.fail(l.Write(h, c.start, startNs, lengthNs))
	}
}

func (c *Collector) loop() {
	defer close(c.done)
	tick := time.NewTicker(time.Duration(c.interval))
	defer tick.Stop()
	for {
		select {
		case ch := <-c.full:
			c.take(ch)
		case <-tick.C:
			c.swapAll()
			// A response that ended in interval k may still sit in a chunk
			// on its way (between a recorder's swap and its send); one more
			// interval of grace makes that a non-event.
			c.closeThrough(int64(time.Since(c.start))/c.interval - 2)
		case <-c.stop:
			return
		}
	}
}

// swapAll takes what every recorder has gathered.
func (c *Collector) swapAll() {
	c.mu.Lock()
	recs := c.recs
	c.mu.Unlock()
	for _, r := range recs {
		if ch := r.swap(); ch != nil {
			c.take(ch)
		}
	}
}

func (c *Collector) take(ch *chunk) {
	for i := range ch.recs {
		c.record(&ch.recs[i])
	}
	c.recycle(ch)
}

func (c *Collector) record(rc *Record) {
	if c.inMemory {
		c.records = append(c.records, *rc)
	}
	if c.clients != nil {
		c.clients.record(rc)
	}
	connWait := rc.Flags&FlagConnWait != 0
	if rc.Flags&FlagNotSent != 0 {
		if connWait { // expired while every connection was busy
			c.connWaits++
			c.sends.waited(rc.End())
		}
		return // never sent: in no histogram, no count of sends, not in results.bin
	}
	end := rc.End()
	lag := rc.Sent - rc.Intended
	code := int(rc.Code)
	if code >= maxCode {
		code = 0
	}
	c.all.add(rc, code, end-rc.Intended)
	latency.Record(c.sendLag, time.Duration(lag))
	if lag > int64(LateThreshold) {
		c.late++
		if !connWait {
			c.ownLate++
		}
	}
	if connWait {
		c.connWaits++
	}
	c.lastSent = max(c.lastSent, rc.Sent)
	c.lastEnd = max(c.lastEnd, end)
	c.bytesIn += int64(rc.bytesIn)
	c.bytesOut += int64(rc.bytesOut)
	c.sends.record(rc.Sent, end, lag, connWait)
	iv := c.intervalFor(end)
	iv.add(rc, code, end-rc.Intended)
	_ = iv.uncorrected.RecordValue(clampNs(rc.Latency))
	c.opsSeen |= 1 << rc.op
	if c.perOp {
		c.recordOp(rc, iv, code, end-rc.Intended)
	}
	if c.spool != nil {
		if err := c.spool.write(rc); err != nil {
			c.fail(err)
			c.spool.discard()
			c.spool = nil
		}
	}
}

func clampNs(ns int64) int64 { return min(max(ns, intervalMinNs), intervalMaxNs) }

// intervalFor returns the open interval a response that ended at end (ns)
// belongs to. One that belongs to an interval already closed (its chunk
// came later than the grace allowed) goes into the oldest open one.
func (c *Collector) intervalFor(end int64) *interval {
	i := max(end/c.interval-c.next, 0)
	for int64(len(c.open)) <= i {
		c.open = append(c.open, c.newInterval())
	}
	return c.open[i]
}

func (c *Collector) newInterval() *interval {
	if n := len(c.spare); n > 0 {
		iv := c.spare[n-1]
		c.spare = c.spare[:n-1]
		return iv
	}
	return &interval{ivTally: ivTally{corrected: NewIntervalHistogram()}, uncorrected: NewIntervalHistogram()}
}

// closeThrough closes every interval up to index k: writes it to the logs
// and the series. An interval in which nothing ended is written empty, so
// that the series has no gaps.
func (c *Collector) closeThrough(k int64) {
	final := k == finalInterval
	for c.next <= k && !(final && len(c.open) == 0) {
		var iv *interval
		if len(c.open) > 0 {
			iv = c.open[0]
			c.open = c.open[1:]
		} else {
			iv = c.newInterval()
		}
		startNs := c.next * c.interval
		length := c.interval
		if final && len(c.open) == 0 {
			// The last interval ends with the last response.
			length = min(max(c.lastEnd-startNs, 1), c.interval)
		}
		c.emit(iv, startNs, length)
		iv.reset()
		iv.uncorrected.Reset()
		for op := range iv.ops {
			iv.ops[op].reset()
		}
		c.spare = append(c.spare, iv)
		c.next++
	}
	c.sends.closeThrough(k)
}

// finalInterval as closeThrough's argument closes every open interval.
const finalInterval = int64(^uint64(0) >> 1)

func (c *Collector) emit(iv *interval, startNs, lengthNs int64) {
	secs := float64(lengthNs) / 1e9
	c.series = append(c.series, Interval{
		StartS: float64(startNs) / 1e9, LengthS: secs,
		Responses: iv.n, Rate: float64(iv.n) / secs, Errors: iv.errors, Shed: iv.shed,
		P50Us: float64(iv.corrected.ValueAtQuantile(50)) / 1e3,
		P99Us: float64(iv.corrected.ValueAtQuantile(99)) / 1e3,
		MaxUs: float64(iv.corrected.Max()) / 1e3,
	})
	if c.perOp {
		c.series[len(c.series)-1].Ops = c.emitOps(iv, startNs, lengthNs, secs)
	}
	c.writeLog(c.logs[0], iv.corrected, startNs, lengthNs)
	c.writeLog(c.logs[1], iv.uncorrected, startNs, lengthNs)
}

// Finish, once every recorder's goroutine has exited, stops the
// goroutine, takes what is left, closes the last intervals and the files,
// writes results.bin, and fills the measured part of res.
func (c *Collector) Finish(res *Result) {
	if c.began {
		close(c.stop)
		<-c.done
	}
	for len(c.full) > 0 { // no recorder sends any more
		c.take(<-c.full)
	}
	c.swapAll()
	if c.all.sent > 0 {
		c.closeThrough(finalInterval)
	}
	for _, l := range append(c.logs[:], c.opLogs[:]...) {
		if l != nil {
			c.fail(l.Close())
		}
	}

	all := c.all.result(0, &c.errors)
	res.Uncorrected, res.Corrected, res.SendLag = all.Uncorrected, all.Corrected, c.sendLag
	res.Codes, res.Errors, res.ErrorCount = all.Codes, all.Errors, all.ErrorCount
	res.Sent, res.Late = all.Sent, c.late
	res.Ops = c.opResults(all)
	res.ConnWaits, res.OwnLate = c.connWaits, c.ownLate
	res.BytesIn, res.BytesOut = c.bytesIn, c.bytesOut
	res.SendSpan, res.Elapsed = time.Duration(c.lastSent), time.Duration(c.lastEnd)
	c.mu.Lock()
	regAt, reconnects := c.regAt, c.reconnects
	c.mu.Unlock()
	res.Intervals = c.sends.fill(c.series, c.start, regAt)
	if c.clients != nil {
		res.Intervals, res.Clients, res.UsefulP99 = c.clients.fill(res.Intervals)
	}
	res.Intervals = extend(res.Intervals, len(reconnects), time.Duration(c.interval).Seconds())
	for i, n := range reconnects {
		res.Intervals[i].Reconnects += n
		res.Reconnects += n
	}
	c.fillOps(res.Intervals)
	if c.inMemory {
		sort.Slice(c.records, func(i, j int) bool { return c.records[i].Sent < c.records[j].Sent })
		res.Records = c.records
	}
	res.errMsgs = c.errors.msgs

	if c.spool != nil {
		if err := c.spool.close(); err != nil {
			c.fail(err)
		} else if err := writeResultsBin(filepath.Join(c.out, ResultsFile), c.spool.path, res); err != nil {
			c.fail(err)
		}
		_ = os.Remove(c.spool.path)
	}
	res.OutputErr = c.err
}
