package render

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/result"
)

// update rewrites the golden reports: go test ./internal/compare/... -update
var update = flag.Bool("update", false, "rewrite testdata's golden REPORT.md and charts from their compare.json")

// goldens are testdata's comparisons: quick runs of the presets against
// a small store (see testdata/README.md), each with the report and charts
// this package writes of it.
var goldens = []string{"queues", "policies", "overload", "scaling", "slow-backend", "queues-published", "writes"}

// TestGoldenReports writes the report of each committed compare.json and
// wants the committed REPORT.md and charts, byte for byte: a change to
// the report shows as a change of testdata in its commit. The folder a
// report is written to appears in it (make pprof-diff RUN=...); it is
// compared as testdata/<name>.
func TestGoldenReports(t *testing.T) {
	for _, name := range goldens {
		t.Run(name, func(t *testing.T) {
			golden := filepath.Join("testdata", name)
			dir := t.TempDir()
			copyFile(t, filepath.Join(golden, result.File), filepath.Join(dir, result.File))
			_, r, err := Render(dir)
			require.NoError(t, err)
			assert.Empty(t, r.Notes, "every chart drawn")
			report := strings.ReplaceAll(string(mustRead(t, r.Path)), dir, golden)
			if *update {
				require.NoError(t, os.RemoveAll(filepath.Join(golden, ChartsDir)))
				require.NoError(t, os.MkdirAll(filepath.Join(golden, ChartsDir), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(golden, ReportFile), []byte(report), 0o644))
				for _, ch := range r.Charts {
					copyFile(t, filepath.Join(dir, ch.Path), filepath.Join(golden, ch.Path))
				}
				return
			}
			assert.Equal(t, string(mustRead(t, filepath.Join(golden, ReportFile))), report, "%s/REPORT.md (go test ./internal/compare/... -update rewrites it)", golden)
			want, err := filepath.Glob(filepath.Join(golden, ChartsDir, "*.svg"))
			require.NoError(t, err)
			assert.Len(t, r.Charts, len(want), "charts drawn")
			for _, ch := range r.Charts {
				assert.Equal(t, mustRead(t, filepath.Join(golden, ch.Path)), mustRead(t, filepath.Join(dir, ch.Path)), "%s/%s", golden, ch.Path)
			}
		})
	}
}

// TestGoldenFindings reads the committed comparisons' findings as data:
// what each preset's run supports, whatever the words.
func TestGoldenFindings(t *testing.T) {
	load := func(name string) *analysis.Analysis {
		t.Helper()
		c, err := result.Load(filepath.Join("testdata", name))
		require.NoError(t, err)
		return analysis.Analyze(c)
	}
	has := func(a *analysis.Analysis, kind analysis.Kind, wl string) analysis.Finding {
		t.Helper()
		f, ok := findIn(a, kind, wl)
		require.True(t, ok, "no %s finding of %s", kind, wl)
		return f
	}
	q := load("queues")
	lead := has(q, analysis.SaturationLead, "get")
	assert.Equal(t, analysis.Tie, lead.Verdict, "one search each: no winner")
	assert.ElementsMatch(t, []string{"direct", "lifo"}, lead.Variants)
	has(q, analysis.CrossCheck, "get")
	has(q, analysis.OverloadSLO, "get")

	p := load("policies")
	assert.Empty(t, kindsIn(p, analysis.SaturationLead), "policies measures under overload only: nothing to rank")
	goodput := has(p, analysis.OverloadGoodput, "mixed:0.5")
	assert.Len(t, goodput.All(analysis.Goodput), len(goodput.Variants)+2, "each variant's goodput and its group's range")
	has(p, analysis.DefaultsTargets, "mixed:0.5")

	o := load("overload")
	w := has(o, analysis.ShedWait, "mixed:0.5")
	assert.NotEmpty(t, w.All(analysis.ShedWaitP50))

	s := load("scaling")
	require.NotNil(t, s.Workloads[0].Grid)
	assert.Equal(t, []int{1}, s.Workloads[0].Grid.Counts, "kvserver on one CPU of this 2-CPU machine")
	has(s, analysis.ScalingCPU, "get")
	has(s, analysis.HandlerTarget, "get")

	wr := load("writes").Writes
	require.NotNil(t, wr)
	require.Len(t, wr.Judgements, 1, "the default against direct")
	j := wr.Judgements[0]
	assert.Equal(t, analysis.TargetNotMet, j.Refused.Verdict, "today's default refuses reads under a flood that direct serves")
	assert.Equal(t, 2, j.Pairs)
	assert.Zero(t, wr.Variant("direct").ReadsRefused.Median)

	sb := load("slow-backend")
	bound := kindsIn(sb, analysis.ConcurrencyBound)
	require.NotEmpty(t, bound, "fifo's 2 workers over a 1 ms store")
	assert.Equal(t, analysis.Bound, bound[0].Verdict)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(to), 0o755))
	require.NoError(t, os.WriteFile(to, mustRead(t, from), 0o644))
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}
