package record

import (
	"iter"
	"math/bits"
	"path/filepath"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/latency"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
)

// Ops are the operations a run sends, in the order reports list them.
var Ops = []api.Method{api.Get, api.Put, api.Delete}

// numOps indexes the per-operation state by api.Method: Get, Put and
// Delete are its first three values.
const numOps = 3

// OpName is op's key in summary.json's ops and in the series: "get",
// "put", "delete" (the -workload names).
func OpName(op api.Method) string { return strings.ToLower(op.String()) }

// OpLogFile is the corrected-latency interval log of one operation of a
// run of several: latency-corrected-get.hlog, … (CorrectedLogFile's format).
func OpLogFile(op api.Method) string {
	return strings.TrimSuffix(CorrectedLogFile, filepath.Ext(CorrectedLogFile)) + "-" + OpName(op) + filepath.Ext(CorrectedLogFile)
}

// opSet is a set of operations: bit op for each.
type opSet uint8

func (s opSet) has(op api.Method) bool { return op < numOps && s&(1<<op) != 0 }

func (s opSet) len() int { return bits.OnesCount8(uint8(s)) }

// all is s's operations in Ops' order.
func (s opSet) all() iter.Seq[api.Method] {
	return func(yield func(api.Method) bool) {
		for _, op := range Ops {
			if s.has(op) && !yield(op) {
				return
			}
		}
	}
}

// mixOps is the operations w sends (a sequential load: PUTs only).
func mixOps(w workload.Workload) opSet {
	if w.Sequential {
		return 1 << api.Put
	}
	var s opSet
	for op, share := range []float64{w.Mix.Get, w.Mix.Put, w.Mix.Delete} {
		if share > 0 {
			s |= 1 << op
		}
	}
	return s
}

// OpResult is one operation's part of a run: the GETs, PUTs or DELETEs
// of a mix. Its counts and histograms are those of Result restricted to
// the records of that operation; summed over a run's Ops they are the
// Result's. Histograms hold microseconds.
type OpResult struct {
	Op                     api.Method
	Sent                   int64 // sent, each answered or failed
	Uncorrected, Corrected *hdrhistogram.Histogram
	Codes                  map[int]int64    // status code → count; 0 = transport error
	Errors                 map[string]int64 // error message → count
	ErrorCount             int64
}

// Shed is how many the server answered 503 (its admission refused them).
func (o *OpResult) Shed() int64 { return o.Codes[503] }

// ErrorRate is the share of o's requests that failed.
func (o *OpResult) ErrorRate() float64 { return ratio(o.ErrorCount, o.Sent) }

// Op is r's figures of op (nil: the run sent none).
func (r *Result) Op(op api.Method) *OpResult {
	for i := range r.Ops {
		if r.Ops[i].Op == op {
			return &r.Ops[i]
		}
	}
	return nil
}

// OpInterval is one operation's part of an Interval: its responses that
// ended in it, per second, those that failed and those the server
// answered 503, and their corrected p99 (µs; 0 where none ended).
type OpInterval struct {
	Responses int64   `json:"responses"`
	Rate      float64 `json:"rate"`
	Errors    int64   `json:"errors"`
	Shed      int64   `json:"shed"`
	P99Us     float64 `json:"p99_us"`
}

// tally is what the collector keeps of the whole run, and of each
// operation of a run of several besides: the histograms and counts of
// what was sent, restricted to that operation. The collector's goroutine
// owns it.
type tally struct {
	uncorrected, corrected *hdrhistogram.Histogram // µs; made with the first record
	codes                  [maxCode]int64
	sent                   int64
	errCounts              []int64 // by error index
}

// add counts rc, sent, with its status code (clamped) and its
// end-to-intended latency corr (ns).
func (t *tally) add(rc *Record, code int, corr int64) {
	if t.corrected == nil {
		t.uncorrected, t.corrected = latency.New(), latency.New()
	}
	latency.Record(t.uncorrected, time.Duration(rc.Latency))
	latency.Record(t.corrected, time.Duration(corr))
	t.sent++
	t.codes[code]++
	if rc.errIdx != 0 {
		i := int64(rc.errIdx - 1)
		t.errCounts = grow(t.errCounts, i)
		t.errCounts[i]++
	}
}

// result is t as op's figures, its errors named from errs.
func (t *tally) result(op api.Method, errs *errorTable) OpResult {
	o := OpResult{Op: op, Sent: t.sent, Uncorrected: t.uncorrected, Corrected: t.corrected, Codes: map[int]int64{}, Errors: map[string]int64{}}
	for code, n := range t.codes {
		if n > 0 {
			o.Codes[code] = n
		}
	}
	for i, n := range t.errCounts {
		if n > 0 {
			o.Errors[errs.message(uint16(i))] += n
			o.ErrorCount += n
		}
	}
	return o
}

// ivTally is what an open interval keeps of the responses that ended in
// it, of the whole run or of one operation: how many, how many failed,
// how many the server answered 503, and their corrected latency (ns;
// the histogram made with the first one).
type ivTally struct {
	corrected       *hdrhistogram.Histogram
	n, errors, shed int64
}

// add counts rc, as tally.add does.
func (t *ivTally) add(rc *Record, code int, corr int64) {
	if t.corrected == nil {
		t.corrected = NewIntervalHistogram()
	}
	_ = t.corrected.RecordValue(clampNs(corr))
	t.n++
	if rc.errIdx != 0 {
		t.errors++
	}
	if code == 503 {
		t.shed++
	}
}

// reset empties t for the interval's reuse, keeping its histogram.
func (t *ivTally) reset() {
	if t.corrected != nil {
		t.corrected.Reset()
	}
	t.n, t.errors, t.shed = 0, 0, 0
}

// recordOp adds rc (sent, with its end-to-intended latency corr, ns) to
// its operation's figures, whole-run and in iv. A record of an operation
// the mix does not send (none of the lab's engines makes one) counts in
// the run's figures only, and opsSeen tells Finish to leave the
// per-operation figures out rather than give ones that do not add up.
func (c *Collector) recordOp(rc *Record, iv *interval, code int, corr int64) {
	if c.opsInMix.has(rc.op) {
		c.ops[rc.op].add(rc, code, corr)
		iv.ops[rc.op].add(rc, code, corr)
	}
}

// emitOps is iv's per-operation part of its series point, and writes
// each operation's histogram to its interval log.
func (c *Collector) emitOps(iv *interval, startNs, lengthNs int64, secs float64) map[string]OpInterval {
	out := make(map[string]OpInterval, numOps)
	for op := range c.opsInMix.all() {
		o := &iv.ops[op]
		p := OpInterval{Responses: o.n, Rate: float64(o.n) / secs, Errors: o.errors, Shed: o.shed}
		if o.corrected == nil {
			o.corrected = NewIntervalHistogram()
		}
		if o.n > 0 {
			p.P99Us = float64(o.corrected.ValueAtQuantile(99)) / 1e3
		}
		out[OpName(op)] = p
		c.writeLog(c.opLogs[op], o.corrected, startNs, lengthNs)
	}
	return out
}

// openOpLogs creates the per-operation interval logs of a run of several.
func (c *Collector) openOpLogs() {
	for op := range c.opsInMix.all() {
		c.opLogs[op] = c.createLog(OpLogFile(op), "corrected "+op.String())
	}
}

// opResults is the run's Ops: per operation of a run of several, or, for
// a run of one operation, that one with the run's own figures (all). A
// run that sent nothing has none, nor one that sent an operation its mix
// does not (opsSeen).
func (c *Collector) opResults(all OpResult) []OpResult {
	if all.Sent == 0 || c.opsSeen&^c.opsInMix != 0 {
		return nil
	}
	var out []OpResult
	for op := range c.opsInMix.all() {
		switch {
		case !c.perOp:
			all.Op = op
			return []OpResult{all}
		case c.ops[op].sent > 0:
			out = append(out, c.ops[op].result(op, &c.errors))
		}
	}
	return out
}

// fillOps completes the series' per-operation parts once it is whole:
// intervals added after the last response get zeros for each operation
// of the mix; a run that recorded an operation outside its mix gets none
// at all, rather than parts that do not sum to the whole.
func (c *Collector) fillOps(series []Interval) {
	if !c.perOp {
		return
	}
	stray := c.opsSeen&^c.opsInMix != 0
	for i := range series {
		p := &series[i]
		switch {
		case stray:
			p.Ops = nil
		case p.Ops == nil:
			p.Ops = make(map[string]OpInterval, numOps)
			for op := range c.opsInMix.all() {
				p.Ops[OpName(op)] = OpInterval{}
			}
		}
	}
}

// OpNamed is the operation OpName calls name.
func OpNamed(name string) (api.Method, bool) {
	for _, op := range Ops {
		if OpName(op) == name {
			return op, true
		}
	}
	return 0, false
}

// OpLogFiles are the per-operation interval logs a run of w streams
// (OpLogFile): one per operation of a mix; none for one operation.
func OpLogFiles(w workload.Workload) []string {
	ops := mixOps(w)
	if ops.len() < 2 {
		return nil
	}
	var out []string
	for op := range ops.all() {
		out = append(out, OpLogFile(op))
	}
	return out
}
