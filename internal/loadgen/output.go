package loadgen

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/kvpool/kvpool/internal/latency"
)

// Files WriteFiles writes into the output directory.
const (
	SummaryFile     = "summary.json"
	CorrectedFile   = "latency-corrected.hgrm"
	UncorrectedFile = "latency-uncorrected.hgrm"
	ResultsFile     = "results.bin"
)

// WriteFiles writes r into dir (created if missing): summary.json, the two
// .hgrm percentile distributions, and, if the run kept them, every
// request's result as results.bin in vegeta's own (gob) format, so that
// `vegeta report results.bin` and `vegeta plot results.bin` work on it.
func (r *Result) WriteFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create output directory: %w", err)
	}
	sum, err := json.MarshalIndent(r.Summary(), "", "  ")
	if err != nil {
		return fmt.Errorf("cannot encode %s: %w", SummaryFile, err)
	}
	if err := os.WriteFile(filepath.Join(dir, SummaryFile), append(sum, '\n'), 0o644); err != nil {
		return fmt.Errorf("cannot write %s: %w", SummaryFile, err)
	}
	for name, h := range map[string]*hdrhistogram.Histogram{CorrectedFile: r.Corrected, UncorrectedFile: r.Uncorrected} {
		if err := writeFile(filepath.Join(dir, name), func(w *bufio.Writer) error { return latency.WriteHGRM(w, h) }); err != nil {
			return err
		}
	}
	if r.Config.KeepResults {
		return writeFile(filepath.Join(dir, ResultsFile), r.writeResults)
	}
	return nil
}

// writeResults encodes every kept request as a vegeta.Result, in send
// order. Timestamp is the actual send, Latency runs from it (vegeta's
// meaning), Seq is the request's place in the schedule.
func (r *Result) writeResults(w *bufio.Writer) error {
	enc := vegeta.NewEncoder(w)
	t, _ := parseTarget(r.Config.Target, true)
	var vr vegeta.Result
	for _, rc := range r.records {
		vr = vegeta.Result{
			Attack:    r.Config.Name,
			Seq:       rc.seq,
			Code:      rc.code,
			Timestamp: r.Start.Add(time.Duration(rc.sent)),
			Latency:   time.Duration(rc.latency),
			BytesOut:  uint64(rc.bytesOut),
			BytesIn:   uint64(rc.bytesIn),
			Method:    rc.op.Method(),
			URL:       t.url(rc.key),
		}
		if rc.errIdx != 0 {
			vr.Error = r.errMsgs[rc.errIdx-1]
		}
		if err := enc.Encode(&vr); err != nil {
			return err
		}
	}
	return nil
}

// writeFile creates path and fills it through a buffered writer.
func writeFile(path string, fill func(*bufio.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("cannot create %s: %w", path, err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	err = fill(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return nil
}
