package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/latency"
	"github.com/kvpool/kvpool/internal/loadgen"
)

// Render writes the report of the comparison in dir again, with this
// build's report code, from what the run left there: compare.json (every
// number, and the options it ran with) and the fixed-rate steps' interval
// logs (the latency-by-percentile chart needs whole distributions, which
// compare.json does not hold). It measures nothing: REPORT.md, compare.json
// and charts/ are replaced, everything else stays as the run left it.
//
// A compare.json written before the options were kept in it is taken to
// have run with its preset's defaults.
func Render(dir string, log io.Writer) (*Comparison, error) {
	b, err := os.ReadFile(filepath.Join(dir, ComparisonFile))
	if err != nil {
		return nil, fmt.Errorf("cannot read the comparison to render: %w", err)
	}
	c := &Comparison{}
	if err := json.Unmarshal(b, c); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ComparisonFile), err)
	}
	if c.Options.Preset == "" {
		c.Options = DefaultOptions()
		c.Options.Preset = c.Preset
		c.Options.ApplyDefaults(false, false)
	}
	if c.Options.Timing == nil {
		// Before compare.json kept the step lengths: the defaults of then.
		t := c.Options.StepTiming()
		if c.Options.Quick {
			t.ProbeBaseline = quickProbeBefore
		}
		c.Options.Timing = &t
	}
	c.Options.Log = log
	c.plan, err = newPlan(&c.Options, c.Env.serverSize())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ComparisonFile), err)
	}
	c.Dir = dir
	for _, wr := range c.Workloads {
		for _, v := range wr.Variants {
			if f := v.Fixed; f != nil {
				if f.CorrectedHist, err = runHistogram(filepath.Join(dir, f.Dir), loadgen.CorrectedLogFile); err != nil {
					return nil, err
				}
				if f.UncorrectedHist, err = runHistogram(filepath.Join(dir, f.Dir), loadgen.UncorrectedLogFile); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := os.RemoveAll(filepath.Join(dir, "charts")); err != nil {
		return nil, fmt.Errorf("cannot replace the charts: %w", err)
	}
	c.Charts = nil
	r := &runner{o: c.Options, t: c.Options.StepTiming(), p: c.plan, c: c, log: log}
	if r.log == nil {
		r.log = io.Discard
	}
	r.drawCharts()
	if err := writeReport(c); err != nil {
		return c, err
	}
	r.logf("report: %s", filepath.Join(dir, ReportFile))
	return c, nil
}

// serverSize is how many CPUs kvserver's set had: its list's, the
// shared set's, or in a comparison that recorded neither, the machine's.
func (e Environment) serverSize() int {
	for _, list := range []string{e.ServerCPUs, e.SharedCPUs} {
		if s, err := cpuset.Parse(list); err == nil {
			return s.Len()
		}
	}
	if e.Pinned {
		return 1 // -pin: CPU 0
	}
	return max(e.Cores, 1)
}

// runHistogram is the whole-run distribution of one loader run in runDir,
// merged from its interval log name, in the microseconds of the run's own
// histograms (latency.New).
func runHistogram(runDir, name string) (*hdrhistogram.Histogram, error) {
	intervals, err := loadgen.ReadIntervalLog(filepath.Join(runDir, name))
	if err != nil {
		return nil, err
	}
	ns := loadgen.NewIntervalHistogram()
	for _, h := range intervals {
		ns.Merge(h)
	}
	us := latency.New()
	for _, bar := range ns.Distribution() {
		if bar.Count > 0 {
			// A bar's To is the highest value it stands for, as
			// ValueAtPercentile reports it; in range, so no error.
			_ = us.RecordValues(latency.Micros(time.Duration(bar.To)), bar.Count)
		}
	}
	return us, nil
}
