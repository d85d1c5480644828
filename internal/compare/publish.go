package compare

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/render"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/latency"
	"github.com/kvpool/kvpool/internal/loadgen/record"
)

// Render writes the report of the comparison in dir again from its
// compare.json of any version (loadRun), changing nothing in dir but
// REPORT.md and charts/; a floor's folder gets its REPORT.md from its
// floor.json.
func Render(dir string) (*result.Comparison, *render.Report, error) {
	if r, ok, err := renderFloor(dir); ok { // a floor's folder: no comparison
		return nil, r, err
	}
	c, err := loadRun(dir)
	if err != nil {
		return nil, nil, err
	}
	r, err := writeReport(c, dir)
	return c, r, err
}

// Publish copies the comparison in run to dest (created) for others to
// read: compare.json, recording that it was published from run, the CPU
// call graphs, and the report written there as published, its charts
// beside it. The raw profiles (.pb.gz) stay in run: the report names
// them rather than links them. `loadtest compare -render dest` writes
// the same report again.
func Publish(run, dest string) (*result.Comparison, *render.Report, error) {
	c, err := loadRun(run)
	if err != nil {
		return nil, nil, err
	}
	c.Published = &result.Published{From: run}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return nil, nil, fmt.Errorf("cannot create %s: %w", dest, err)
	}
	for _, ps := range c.Profiles {
		if ps.SVG == "" {
			continue
		}
		if err := copyFile(filepath.Join(run, ps.SVG), filepath.Join(dest, ps.SVG)); err != nil {
			return nil, nil, err
		}
	}
	if err := result.Save(dest, c); err != nil {
		return nil, nil, err
	}
	r, err := writeReport(c, dest)
	return c, r, err
}

// writeReport writes c's report, from its analysis, into dir: the run's
// last act, and all that rendering again does.
func writeReport(c *result.Comparison, dir string) (*render.Report, error) {
	return render.Write(c, analysis.Analyze(c), dir)
}

// loadRun reads dir's comparison, with the fixed-rate distributions it
// did not record read from its runs' interval logs.
func loadRun(dir string) (*result.Comparison, error) {
	c, err := result.Load(dir)
	if err != nil {
		return nil, err
	}
	for _, wr := range c.Workloads {
		for _, v := range wr.Variants {
			f := v.Fixed
			if f == nil || f.Distribution != nil {
				continue
			}
			run := filepath.Join(dir, f.Dir)
			corrected, err := runHistogram(run, record.CorrectedLogFile)
			if err != nil {
				return nil, err
			}
			uncorrected, err := runHistogram(run, record.UncorrectedLogFile)
			if err != nil {
				return nil, err
			}
			f.Distribution = distributionOf(corrected, uncorrected, chartPercentiles)
		}
	}
	return c, nil
}

// runHistogram is the whole-run distribution of one loader run in runDir,
// merged from its interval log name, in the microseconds of the run's own
// histograms (latency.New).
func runHistogram(runDir, name string) (*hdrhistogram.Histogram, error) {
	intervals, err := record.ReadIntervalLog(filepath.Join(runDir, name))
	if err != nil {
		return nil, err
	}
	ns := record.NewIntervalHistogram()
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

// copyFile copies from (a call graph: small) to to, creating to's folder.
func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return fmt.Errorf("cannot publish %s: %w", from, err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o666) // os.Create's mode
}
