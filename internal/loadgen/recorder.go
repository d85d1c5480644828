package loadgen

import (
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/kvpool/kvpool/internal/latency"
)

// lateThreshold is how far behind schedule a send may start before it
// counts as late in Result.Late.
const lateThreshold = time.Millisecond

// maxCode bounds the status codes counted individually; anything else
// (which a conforming server never sends) is counted under code 0.
const maxCode = 600

// outcome is what one request produced.
type outcome struct {
	seq      uint64
	key      uint64
	op       Op
	intended int64 // when it was due, ns since the start (== sent if unpaced)
	sent     int64 // when its first byte was written, ns since the start
	end      int64 // when its response was read, ns since the start
	code     int   // 0 if err != nil
	bytesOut int
	bytesIn  int
	err      error
}

// record is one request's outcome as kept for results.bin. It holds no
// pointers, so the large slices of them cost the garbage collector nothing.
type record struct {
	seq      uint64
	key      uint64
	sent     int64 // ns since the start
	latency  int64 // ns, from sent
	bytesOut uint32
	bytesIn  uint32
	code     uint16
	errIdx   uint16 // 0: none; otherwise 1 + index into recorder.errMsgs
	op       Op
}

// recorder accumulates the outcomes of one worker (one goroutine), so that
// recording takes no lock: only live and errCount are read by others while
// the run goes on (the progress line); everything else is read after the
// worker has exited, through merge.
type recorder struct {
	uncorrected *hdrhistogram.Histogram // from the actual send
	corrected   *hdrhistogram.Histogram // from the scheduled send
	sendLag     *hdrhistogram.Histogram // scheduled → actual send

	live     latency.Live // corrected, microseconds; read concurrently
	errCount atomic.Int64 // read concurrently

	codes    [maxCode]int64
	sent     int64
	late     int64
	lastSent int64 // ns since the start
	lastEnd  int64
	bytesIn  int64
	bytesOut int64

	errMsgs   []string // distinct error messages, in first-seen order
	errCounts []int64
	errIndex  map[string]uint16

	keep    bool
	records []record
}

func newRecorder(keep bool) *recorder {
	return &recorder{
		uncorrected: latency.New(),
		corrected:   latency.New(),
		sendLag:     latency.New(),
		keep:        keep,
	}
}

// add records o. failed tells whether o counts as an error (see isFailure).
func (r *recorder) add(o *outcome) {
	unc := time.Duration(o.end - o.sent)
	cor := time.Duration(o.end - o.intended)
	lag := time.Duration(o.sent - o.intended)
	latency.Record(r.uncorrected, unc)
	latency.Record(r.corrected, cor)
	latency.Record(r.sendLag, lag)
	r.live.Record(latency.Micros(cor))
	r.sent++
	r.lastSent = max(r.lastSent, o.sent)
	r.lastEnd = max(r.lastEnd, o.end)
	if lag > lateThreshold {
		r.late++
	}
	if o.code >= 0 && o.code < maxCode {
		r.codes[o.code]++
	} else {
		r.codes[0]++
	}
	r.bytesIn += int64(o.bytesIn)
	r.bytesOut += int64(o.bytesOut)

	var errIdx uint16
	if msg := failure(o); msg != "" {
		r.errCount.Add(1)
		errIdx = r.errorIndex(msg) + 1
	}
	if r.keep {
		r.records = append(r.records, record{
			seq: o.seq, key: o.key, sent: o.sent, latency: o.end - o.sent,
			bytesOut: uint32(o.bytesOut), bytesIn: uint32(o.bytesIn),
			code: uint16(o.code), errIdx: errIdx, op: o.op,
		})
	}
}

// errorIndex returns the index of msg in errMsgs, adding it if new, and
// counts one occurrence.
func (r *recorder) errorIndex(msg string) uint16 {
	if r.errIndex == nil {
		r.errIndex = make(map[string]uint16)
	}
	i, ok := r.errIndex[msg]
	if !ok {
		if len(r.errMsgs) == 1<<16-2 { // keep errIdx+1 in a uint16
			msg = "other errors"
			if i, ok = r.errIndex[msg]; ok {
				r.errCounts[i]++
				return i
			}
		}
		i = uint16(len(r.errMsgs))
		r.errIndex[msg] = i
		r.errMsgs = append(r.errMsgs, msg)
		r.errCounts = append(r.errCounts, 0)
	}
	r.errCounts[i]++
	return i
}

// failure says why o is an error, or "" if it is not. Errors are transport
// failures and statuses other than 2xx, except 404 on GET (an absent key is
// an answer, not a failure). 503 (shed by the server) is an error: the
// saturation search must not call a rate sustainable while it sheds.
func failure(o *outcome) string {
	if o.err != nil {
		return describeError(o.err)
	}
	if o.code >= 200 && o.code < 300 || o.code == 404 && o.op == OpGet {
		return ""
	}
	return statusText(o.code)
}
