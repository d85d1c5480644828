package record

import (
	"bufio"
	"fmt"
	"os"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/kvpool/kvpool/internal/latency"
)

// Files a run streams into Config.Out as it goes.
const (
	// CorrectedLogFile and UncorrectedLogFile are HdrHistogram interval
	// logs (format 1.3, as HistogramLogProcessor and the HdrHistogram
	// plotters read): one histogram of the latencies, in nanoseconds, of
	// the responses that ended in each Config.Interval.
	CorrectedLogFile   = "latency-corrected.hlog"
	UncorrectedLogFile = "latency-uncorrected.hlog"
	// ResultsFile is every request in vegeta's gob format (see
	// writeResultsBin), written when Config.KeepResults is set.
	ResultsFile = "results.bin"
)

// IntervalLog is one .hlog file, written with hdrhistogram-go's writer.
// Timestamps are relative to a base time (the run's start, whole seconds)
// that the header records, as the Java tools write them.
type IntervalLog struct {
	path string
	f    *os.File
	w    *bufio.Writer
	lw   *hdrhistogram.HistogramLogWriter
}

// CreateIntervalLog creates path with the header of a run that started at
// start; what ("corrected", "uncorrected") names the latency it holds.
func CreateIntervalLog(path string, start time.Time, what string) (*IntervalLog, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cannot create %s: %w", path, err)
	}
	w := bufio.NewWriter(f)
	lw := hdrhistogram.NewHistogramLogWriter(w)
	startMs := start.UnixMilli()
	base := startMs - startMs%1000 // the header holds whole seconds
	lw.SetBaseTime(base)
	_ = lw.OutputLogFormatVersion()
	_ = lw.OutputComment(fmt.Sprintf("[loadtest: %s latency in nanoseconds, one histogram per interval]", what))
	_ = lw.OutputStartTime(startMs)
	_ = lw.OutputBaseTime(base)
	if err := lw.OutputLegend(); err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot write %s: %w", path, err)
	}
	return &IntervalLog{path: path, f: f, w: w, lw: lw}, nil
}

// Write appends h (nanoseconds) as the interval [startNs, startNs+lengthNs) of the run.
func (l *IntervalLog) Write(h *hdrhistogram.Histogram, start time.Time, startNs, lengthNs int64) error {
	h.SetStartTimeMs(start.Add(time.Duration(startNs)).UnixMilli())
	h.SetEndTimeMs(start.Add(time.Duration(startNs + lengthNs)).UnixMilli())
	if err := l.lw.OutputIntervalHistogram(h); err != nil {
		return fmt.Errorf("cannot write %s: %w", l.path, err)
	}
	return nil
}

// Close flushes and closes the file.
func (l *IntervalLog) Close() error { return closeFile(l.path, l.f, l.w, nil) }

// NewIntervalHistogram returns an empty histogram of an interval log's
// unit and range (nanoseconds, 1 µs to 60 s, 3 significant digits).
func NewIntervalHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(intervalMinNs, intervalMaxNs, latency.SignificantDigits)
}

// ReadIntervalLog reads every histogram of an interval log, in order, with
// hdrhistogram-go's reader; each carries its absolute start and end
// (StartTimeMs, EndTimeMs).
func ReadIntervalLog(path string) ([]*hdrhistogram.Histogram, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read interval log: %w", err)
	}
	defer f.Close()
	r := hdrhistogram.NewHistogramLogReader(f)
	var out []*hdrhistogram.Histogram
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			return out, fmt.Errorf("cannot read %s: %w", path, err)
		}
		if h == nil {
			return out, nil
		}
		out = append(out, h)
	}
}
