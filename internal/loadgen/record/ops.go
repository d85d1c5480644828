package record

import (
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

// mixOps says which operations mix sends (a sequential load: PUTs only).
func mixOps(w workload.Workload) (ops [numOps]bool, n int) {
	if w.Sequential {
		ops[api.Put] = true
		return ops, 1
	}
	for i, share := range []float64{w.Mix.Get, w.Mix.Put, w.Mix.Delete} {
		if share > 0 {
			ops[i] = true
			n++
		}
	}
	return ops, n
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
func (o *OpResult) ErrorRate() float64 {
	if o.Sent == 0 {
		return 0
	}
	return float64(o.ErrorCount) / float64(o.Sent)
}

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

// opStats is what the collector keeps of one operation of a run of
// several, besides the run's own figures: the same histograms and counts
// restricted to that operation. The collector's goroutine owns it.
type opStats struct {
	uncorrected, corrected *hdrhistogram.Histogram // µs
	codes                  [maxCode]int64
	sent                   int64
	errCounts              []int64 // by error index
}

// opInterval is one operation's part of an open interval; its histogram
// (ns) is made with the interval's first response of that operation.
type opInterval struct {
	corrected       *hdrhistogram.Histogram
	n, errors, shed int64
}

// reset empties o for the interval's reuse, keeping its histogram.
func (o *opInterval) reset() {
	if o.corrected != nil {
		o.corrected.Reset()
	}
	o.n, o.errors, o.shed = 0, 0, 0
}

// recordOp adds rc (sent, with its end-to-intended latency corr, ns) to
// its operation's figures, whole-run and in iv. A record of an operation
// the mix does not send (none of the lab's engines makes one) counts in
// the run's figures only, and opsSeen tells Finish to leave the
// per-operation figures out rather than give ones that do not add up.
func (c *Collector) recordOp(rc *Record, iv *interval, code int, corr int64) {
	op := int(rc.op)
	if op >= numOps || !c.opsInMix[op] {
		return
	}
	s := &c.ops[op]
	if s.corrected == nil {
		s.uncorrected, s.corrected = latency.New(), latency.New()
	}
	latency.Record(s.uncorrected, time.Duration(rc.Latency))
	latency.Record(s.corrected, time.Duration(corr))
	s.sent++
	s.codes[code]++
	o := &iv.ops[op]
	if o.corrected == nil {
		o.corrected = NewIntervalHistogram()
	}
	_ = o.corrected.RecordValue(clampNs(corr))
	o.n++
	if rc.errIdx != 0 {
		i := int64(rc.errIdx - 1)
		s.errCounts = grow(s.errCounts, i)
		s.errCounts[i]++
		o.errors++
	}
	if code == 503 {
		o.shed++
	}
}

// emitOps is iv's per-operation part of its series point, and writes
// each operation's histogram to its interval log.
func (c *Collector) emitOps(iv *interval, startNs, lengthNs int64, secs float64) map[string]OpInterval {
	out := make(map[string]OpInterval, numOps)
	for op := range numOps {
		if !c.opsInMix[op] {
			continue
		}
		o := &iv.ops[op]
		p := OpInterval{Responses: o.n, Rate: float64(o.n) / secs, Errors: o.errors, Shed: o.shed}
		if o.corrected == nil {
			o.corrected = NewIntervalHistogram()
		}
		if o.n > 0 {
			p.P99Us = float64(o.corrected.ValueAtQuantile(99)) / 1e3
		}
		out[OpName(api.Method(op))] = p
		if l := c.opLogs[op]; l != nil {
			if err := l.Write(o.corrected, c.start, startNs, lengthNs); err != nil {
				c.fail(err)
			}
		}
	}
	return out
}

// openOpLogs creates the per-operation interval logs of a run of several.
func (c *Collector) openOpLogs() {
	for op := range numOps {
		if !c.opsInMix[op] {
			continue
		}
		m := api.Method(op)
		l, err := CreateIntervalLog(filepath.Join(c.out, OpLogFile(m)), c.start, "corrected "+m.String())
		if err != nil {
			c.fail(err)
			continue
		}
		c.opLogs[op] = l
	}
}

// mixMask is opsSeen's bits of the operations the mix sends.
func (c *Collector) mixMask() uint8 {
	var m uint8
	for op, in := range c.opsInMix {
		if in {
			m |= 1 << op
		}
	}
	return m
}

// opResults is the run's Ops: per operation of a run of several, or, for
// a run of one operation, that one with the run's own figures (res's,
// already filled). A run that sent nothing has none, nor one that sent
// an operation its mix does not (opsSeen).
func (c *Collector) opResults(res *Result) []OpResult {
	if c.sent == 0 || c.opsSeen&^c.mixMask() != 0 {
		return nil
	}
	if !c.perOp {
		for op := range numOps {
			if c.opsInMix[op] {
				return []OpResult{{Op: api.Method(op), Sent: res.Sent, Uncorrected: res.Uncorrected, Corrected: res.Corrected,
					Codes: res.Codes, Errors: res.Errors, ErrorCount: res.ErrorCount}}
			}
		}
		return nil
	}
	var out []OpResult
	for op := range numOps {
		s := &c.ops[op]
		if s.sent == 0 {
			continue
		}
		o := OpResult{Op: api.Method(op), Sent: s.sent, Uncorrected: s.uncorrected, Corrected: s.corrected,
			Codes: map[int]int64{}, Errors: map[string]int64{}}
		for code, n := range s.codes {
			if n > 0 {
				o.Codes[code] = n
			}
		}
		for i, n := range s.errCounts {
			if n > 0 {
				o.Errors[c.errors.message(uint16(i))] += n
				o.ErrorCount += n
			}
		}
		out = append(out, o)
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
	stray := c.opsSeen&^c.mixMask() != 0
	for i := range series {
		p := &series[i]
		switch {
		case stray:
			p.Ops = nil
		case p.Ops == nil:
			p.Ops = make(map[string]OpInterval, numOps)
			for op, in := range c.opsInMix {
				if in {
					p.Ops[OpName(api.Method(op))] = OpInterval{}
				}
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
	ops, n := mixOps(w)
	if n < 2 {
		return nil
	}
	var out []string
	for op, in := range ops {
		if in {
			out = append(out, OpLogFile(api.Method(op)))
		}
	}
	return out
}
