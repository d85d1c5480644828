package compare

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/latency"
)

// answers splits an overload step's requests by what became of them: a
// shed 503 is answered at once, and in the loader's histograms of all
// requests it flatters the served requests' p99.
type answers struct {
	Served, Shed, Timeouts, Other int64
	// ServedCorrected and ServedUncorrected hold the served requests'
	// latencies (µs), from the intended and from the actual send.
	ServedCorrected, ServedUncorrected *hdrhistogram.Histogram
	// ShedWait holds how long a shed request waited for its 503 (µs, from
	// the actual send): near zero when newcomers are rejected, long when
	// the oldest are dropped.
	ShedWait *hdrhistogram.Histogram
	// PerSecond is the corrected p99 of every request by the second it was
	// due in, and the answers of each kind in that second.
	PerSecond []result.SecondPoint
}

// served reports whether an answer counts as served: 2xx, or 404 (an
// absent key is an answer).
func served(code uint16) bool { return code >= 200 && code < 300 || code == 404 }

// readAnswers splits a results.bin (vegeta's format) of a run that
// started at start at rate: request seq was due at start + seq/rate.
func readAnswers(path string, start time.Time, rate float64) (*answers, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the step's results to split served from shed requests: %w", err)
	}
	defer f.Close()
	a := &answers{ServedCorrected: latency.New(), ServedUncorrected: latency.New(), ShedWait: latency.New()}
	perSecond := map[int]*hdrhistogram.Histogram{}
	counts := map[int]*result.SecondPoint{}
	dec := vegeta.NewDecoder(bufio.NewReaderSize(f, 1<<20))
	var r vegeta.Result
	for {
		r = vegeta.Result{}
		if err := dec.Decode(&r); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("cannot decode %s: %w", path, err)
		}
		intended := time.Duration(float64(r.Seq) / rate * float64(time.Second))
		corrected := r.Timestamp.Sub(start) + r.Latency - intended
		sec := int(intended / time.Second)
		h := perSecond[sec]
		if h == nil {
			h = latency.New()
			perSecond[sec] = h
			counts[sec] = &result.SecondPoint{Second: sec}
		}
		latency.Record(h, corrected)
		switch {
		case r.Code == 0:
			a.Timeouts++
		case served(r.Code):
			a.Served++
			counts[sec].Served++
			latency.Record(a.ServedCorrected, corrected)
			latency.Record(a.ServedUncorrected, r.Latency)
		case r.Code == 503:
			a.Shed++
			counts[sec].Shed++
			latency.Record(a.ShedWait, r.Latency)
		default:
			a.Other++
		}
	}
	last := -1
	for sec := range counts {
		last = max(last, sec)
	}
	for sec := 0; sec <= last; sec++ {
		if p, ok := counts[sec]; ok {
			p.P99 = latency.ValueAt(perSecond[sec], 99)
			a.PerSecond = append(a.PerSecond, *p)
		}
	}
	return a, nil
}
