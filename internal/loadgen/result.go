package loadgen

import (
	"fmt"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/kvpool/kvpool/internal/latency"
)

// Result is everything a run measured. Histograms hold microseconds.
type Result struct {
	Config Config
	Start  time.Time
	// Elapsed runs from the start to the last response.
	Elapsed time.Duration
	// SendSpan runs from the start to the last send.
	SendSpan time.Duration
	// Planned is the number of requests the schedule asked for (Rate ×
	// Duration, or Config.Requests); 0 for a closed loop bounded by time.
	Planned uint64
	// Sent counts requests sent; each was answered or failed.
	Sent int64
	// Resume is the lowest seq not known to be done (fast engine): every
	// request below it succeeded. With Config.Retries it is where an
	// interrupted or failed fill resumes.
	Resume uint64

	Uncorrected *hdrhistogram.Histogram // from the actual send
	Corrected   *hdrhistogram.Histogram // from the scheduled send
	SendLag     *hdrhistogram.Histogram // how late each send started

	Codes      map[int]int64    // status code → count; 0 = transport error
	Errors     map[string]int64 // error message → count
	ErrorCount int64
	// Late counts sends that started more than 1 ms after schedule.
	Late int64

	BytesIn, BytesOut int64
	// ConnsStart and ConnsPeak are the connections (vegeta: workers) at the
	// start and at most; ConnsPeak > ConnsStart means the engine had to open
	// more because every connection was busy.
	ConnsStart, ConnsPeak int
	// CPU is the loader process's CPU time during the run.
	CPU CPUTime

	records []record // sorted by send time, errIdx into errMsgs
	errMsgs []string
}

// Unsent is how many scheduled requests were never sent (the run was
// interrupted, or requests were still queued when the drain time ran out).
func (r *Result) Unsent() int64 {
	if r.Planned == 0 || int64(r.Planned) < r.Sent {
		return 0
	}
	return int64(r.Planned) - r.Sent
}

// AchievedRate is responses per second over the whole run.
func (r *Result) AchievedRate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Sent) / r.Elapsed.Seconds()
}

// SendRate is sends per second, from the start to the last send.
func (r *Result) SendRate() float64 {
	if r.SendSpan <= 0 {
		return 0
	}
	return float64(r.Sent) / r.SendSpan.Seconds()
}

// ErrorRate is the share of sent requests that failed.
func (r *Result) ErrorRate() float64 {
	if r.Sent == 0 {
		return 0
	}
	return float64(r.ErrorCount) / float64(r.Sent)
}

// CPUPerRequest is the loader's CPU time per sent request.
func (r *Result) CPUPerRequest() time.Duration {
	if r.Sent == 0 {
		return 0
	}
	return r.CPU.Total() / time.Duration(r.Sent)
}

// keptUp is the share of the asked rate a run must achieve to count as
// having been offered that rate.
const keptUp = 0.99

// Warnings lists what makes the run's numbers untrustworthy or surprising,
// loudest first. Empty means the loader kept up.
func (r *Result) Warnings() []string {
	var w []string
	asked := r.Config.Rate
	if asked > 0 {
		if ach := r.AchievedRate(); ach < keptUp*asked {
			w = append(w, fmt.Sprintf("achieved %.0f req/s, %.1f%% of the asked %.0f req/s: the server or the loader could not keep up (loader CPU %.1f µs/request; sends late: %d)",
				ach, 100*ach/asked, asked, micros(r.CPUPerRequest()), r.Late))
		}
		if u := r.Unsent(); u > 0 {
			w = append(w, fmt.Sprintf("%d of %d scheduled requests were never sent (interrupted, or still queued when the drain time -timeout ran out)", u, r.Planned))
		}
		if r.Late > 0 && float64(r.Late) > 0.001*float64(r.Sent) {
			w = append(w, fmt.Sprintf("%d requests (%.2f%%) were sent more than %v behind schedule (send lag p99 %s, max %s): corrected latencies include that wait, uncorrected ones do not",
				r.Late, 100*float64(r.Late)/float64(r.Sent), lateThreshold,
				latency.FormatMicros(r.SendLag.ValueAtPercentile(99)), latency.FormatMicros(r.SendLag.Max())))
		}
	}
	if r.ConnsPeak > r.ConnsStart {
		capped := ""
		if r.ConnsPeak >= r.Config.MaxConns {
			capped = fmt.Sprintf(", reaching the cap -max-conns %d", r.Config.MaxConns)
		}
		w = append(w, fmt.Sprintf("every connection was busy: opened %d more than the %d at start%s", r.ConnsPeak-r.ConnsStart, r.ConnsStart, capped))
	}
	return w
}

// merge folds the recorders of finished workers into r.
func (r *Result) merge(recs []*recorder) {
	r.Uncorrected, r.Corrected, r.SendLag = latency.New(), latency.New(), latency.New()
	r.Codes = map[int]int64{}
	r.Errors = map[string]int64{}
	global := map[string]uint16{}
	var lastSent, lastEnd int64
	n := 0
	for _, rec := range recs {
		n += len(rec.records)
	}
	if n > 0 {
		r.records = make([]record, 0, n)
	}
	for _, rec := range recs {
		r.Uncorrected.Merge(rec.uncorrected)
		r.Corrected.Merge(rec.corrected)
		r.SendLag.Merge(rec.sendLag)
		for code, c := range rec.codes {
			if c > 0 {
				r.Codes[code] += c
			}
		}
		remap := make([]uint16, len(rec.errMsgs))
		for i, msg := range rec.errMsgs {
			r.Errors[msg] += rec.errCounts[i]
			r.ErrorCount += rec.errCounts[i]
			g, ok := global[msg]
			if !ok {
				g = uint16(len(r.errMsgs))
				global[msg] = g
				r.errMsgs = append(r.errMsgs, msg)
			}
			remap[i] = g
		}
		for _, rc := range rec.records {
			if rc.errIdx != 0 {
				rc.errIdx = remap[rc.errIdx-1] + 1
			}
			r.records = append(r.records, rc)
		}
		r.Sent += rec.sent
		r.Late += rec.late
		r.BytesIn += rec.bytesIn
		r.BytesOut += rec.bytesOut
		lastSent = max(lastSent, rec.lastSent)
		lastEnd = max(lastEnd, rec.lastEnd)
	}
	sort.Slice(r.records, func(i, j int) bool { return r.records[i].sent < r.records[j].sent })
	r.SendSpan = time.Duration(lastSent)
	r.Elapsed = time.Duration(lastEnd)
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
