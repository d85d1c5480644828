// Package render writes a comparison's report: REPORT.md and its SVG
// charts, from what the comparison measured (result) and what the
// analysis derived from it. It measures nothing, computes no statistic
// and needs no runner: Write writes the report of any compare.json
// again, byte for byte what the run wrote where the code is the same,
// and a published copy (compare.json's Published record) as it was
// published.
package render

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/result"
)

// Files in the report's folder.
const (
	ReportFile = "REPORT.md"
	ChartsDir  = "charts"
)

// Headings of REPORT.md, in order; the tests check them.
const (
	// HeadAnswer opens the report: the preset's question, the ratios to
	// direct with their intervals, and what they could not tell apart.
	HeadAnswer      = "## The answer"
	HeadFindings    = "## Findings"
	HeadMethod      = "## How it was measured"
	HeadPools       = "## What a pool does in Go"
	HeadEnvironment = "## Environment"
	HeadLoader      = "### Did the loader keep up?"
	HeadFailures    = "## Failed steps"
	HeadResults     = "## Results"
	HeadClosed      = "### Closed loop"
	HeadScaling     = "## Scaling"
	HeadOverload    = "## Overload"
	HeadCharts      = "## Charts"
	HeadProfiles    = "## Profiles"
)

// Report is what Write wrote.
type Report struct {
	Path     string   // REPORT.md's
	Findings []string // as the report words them
	Charts   []Chart  // drawn, their paths relative to the report's folder
	// Notes are what the report says went wrong while writing it (a
	// chart that could not be drawn), after the run's own notes.
	Notes []string
}

// page is REPORT.md's text as Write builds it.
type page struct{ bytes.Buffer }

func (p *page) printf(format string, args ...any) { fmt.Fprintf(&p.Buffer, format, args...) }

// table starts a Markdown table: the row of heads and the rule under it.
func (p *page) table(heads ...string) {
	p.printf("| %s |\n|%s\n", strings.Join(heads, " | "), strings.Repeat("---|", len(heads)))
}

// row writes a table's row, each cell as %v formats it.
func (p *page) row(cells ...any) {
	p.WriteString("|")
	for _, c := range cells {
		p.printf(" %v |", c)
	}
	p.WriteString("\n")
}

// Chart is one chart of a report.
type Chart struct {
	Title, Path, Caption string
}

// Write writes c's report into dir: its charts into dir/charts (replaced)
// and REPORT.md, from c and a, its analysis.
func Write(c *result.Comparison, a *analysis.Analysis, dir string) (*Report, error) {
	r := &Report{Path: filepath.Join(dir, ReportFile)}
	drawCharts(c, a, dir, r)
	var b page
	b.printf("# Compare: preset `%s`\n\n", c.Preset)
	if c.Interrupted {
		b.printf("**Interrupted (Ctrl-C or a TERM signal) before the end: this report holds the steps that finished.**\n\n")
	}
	writeAnswer(&b, c.Preset, a)
	b.printf("%s\n\n", HeadFindings)
	r.Findings = append(sentences(a), metastableSentences(c, a.Metastable)...)
	r.Findings = append(r.Findings, writesSentences(a.Writes)...)
	if len(r.Findings) == 0 {
		b.printf("None: the numbers of this run support no finding (see the failures and notes below).\n")
	}
	for _, f := range r.Findings {
		b.printf("- %s\n", f)
	}
	b.printf("\n%s\n\n", HeadMethod)
	if p := c.Published; p != nil {
		b.printf("*Published from `%s` by `make compare-publish`: the charts and CPU call graphs are here; the raw profiles (`.pb.gz`, for `make pprof-diff` and `go tool pprof -http`) stayed in that run's folder.*\n\n",
			filepath.Base(p.From))
	}
	b.printf("%s\n\n", runSummary(c, a))
	b.printf("%s\n\n%s\n\n", HeadPools, poolsInGo)
	writeEnvironment(&b, c, a, r.Notes)
	writeFailures(&b, c.Failures)
	for i, wr := range c.Workloads {
		if c.Plan.Writes != nil {
			break // its section is its own: no search, no step
		}
		if aw := a.Workloads[i]; aw.Grid != nil {
			writeScaling(&b, c, wr, aw)
			writePairedTable(&b, c, wr, aw)
		} else {
			writeWorkload(&b, c, wr, aw)
		}
	}
	writeMetastable(&b, c, a)
	writeWrites(&b, c, a)
	writeCharts(&b, r.Charts)
	writeProfiles(&b, c, dir)
	return r.save(&b)
}

// save writes b as r's REPORT.md.
func (r *Report) save(b *page) (*Report, error) {
	if err := os.WriteFile(r.Path, b.Bytes(), 0o644); err != nil {
		return r, fmt.Errorf("cannot write the report: %w", err)
	}
	return r, nil
}

// poolsInGo is the opening section: how to read the numbers coming from
// the seeds' Java servers.
const poolsInGo = `fasthttp already runs each connection on its own goroutine, and kvserver's
handler waits for its job's result. So here a pool does not free a selector
thread, as ` + "`ExecutorService`" + ` did behind one-nio's selectors in the course's Java
servers: it bounds how many requests touch the store at once and decides the
order in which waiting work is served (FIFO, LIFO, relaxed, adaptive) and what
is shed when the queue is full. A goroutine per job is cheaper than any pool
hand-off (` + "`make bench-pools`" + ` measures both), so ` + "`direct`" + ` (the store call in
the handler) is the baseline every ratio below refers to: a pool earns its
place by what it does under load (bounds, order, shedding), not by raw speed.`

// writeFailures lists the steps that failed, each with its reason and,
// in a block, kvserver's last output. A reason of several lines (an error
// that quotes that output) gives the bullet its first line; the rest is
// shown in a block too, once.
func writeFailures(b *page, failures []result.Failure) {
	if len(failures) == 0 {
		return
	}
	b.printf("%s\n\n", HeadFailures)
	for _, f := range failures {
		reason, rest, _ := strings.Cut(f.Reason, "\n")
		b.printf("- **%s** %s %s: %s\n", f.Workload, f.Variant, f.Step, reason)
		tail := strings.TrimRight(f.LogTail, "\n")
		if strings.TrimSpace(rest) == strings.TrimSpace(tail) {
			rest = ""
		}
		for _, block := range []string{strings.TrimRight(rest, "\n"), tail} {
			if strings.TrimSpace(block) != "" {
				b.printf("\n  ```\n%s\n  ```\n", "  "+strings.ReplaceAll(block, "\n", "\n  "))
			}
		}
	}
	b.printf("\n")
}
