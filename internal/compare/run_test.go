package compare

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/render"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/harness"
	"github.com/kvpool/kvpool/internal/harness/harnesstest"
	"github.com/kvpool/kvpool/internal/loadgen/saturate"
)

// kvserverBin is the real kvserver, built once by TestMain.
var kvserverBin string

func TestMain(m *testing.M) {
	// Without -race even in a -race run: the steps measure kvserver near
	// saturation, and the race runtime would be what they measured.
	os.Exit(harnesstest.RunWithKVServer(m, &kvserverBin, false))
}

// tinyTiming keeps every step to a second or less: the test checks the
// report's shape, not the numbers.
func tinyTiming() *plan.Timing {
	return &plan.Timing{
		SatStep: 300 * time.Millisecond, SatValidate: 500 * time.Millisecond, SatCooldown: 50 * time.Millisecond,
		SatStartRate: 500, SatMaxRate: 2000, SatPrecision: 0.5,
		Fixed: time.Second, Overload: time.Second,
		ProbeBaseline: 500 * time.Millisecond, RecoverProbes: 1, ProbeLength: 500 * time.Millisecond,
		ProfileSeconds: 1, RequestTimeout: 2 * time.Second,
		Closed: 300 * time.Millisecond, ClosedRounds: 2, ClosedPairs: 2,
		WarmUp: 100 * time.Millisecond, AnchorRounds: 1,
	}
}

// checked is o as Validate accepts it, what Run takes; t fails where
// Validate refuses it.
func checked(t *testing.T, o plan.Options) Checked {
	t.Helper()
	c, err := Validate(o)
	require.NoError(t, err)
	return c
}

// TestQueuesEndToEnd runs a miniature queues preset (direct and lifo, a
// tiny store, steps of a second) against the real kvserver and checks what
// a reader relies on: the report's sections in order, a table row per pool
// in each table, charts that are SVG documents, profiles that pprof can
// load, and a CPU diff of lifo against direct.
func TestQueuesEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	o := plan.DefaultOptions()
	o.Kvserver, o.Pools, o.Workload = kvserverBin, []string{"direct", "lifo"}, "get"
	o.Keys, o.ValueSize, o.Repeat = 500, 100, 1
	o.MaxConns, o.Timing, o.QuietWait, o.Out = 256, tinyTiming(), 0, t.TempDir()
	c, rep, err := Run(ctx, checked(t, o), nil)
	require.NoError(t, err)
	require.NoError(t, ctx.Err(), "the comparison did not finish in time")
	assert.Empty(t, c.Failures, "no step should fail against a healthy kvserver")
	assert.False(t, c.Interrupted)
	assert.NotEmpty(t, rep.Findings, "the run's numbers support at least its overload findings")

	b, err := os.ReadFile(filepath.Join(c.Dir, render.ReportFile))
	require.NoError(t, err)
	report := string(b)
	last := -1
	for _, h := range []string{render.HeadAnswer, render.HeadFindings, render.HeadMethod, render.HeadPools, render.HeadEnvironment, render.HeadLoader, render.HeadResults + ": `get`", render.HeadClosed + ": `get`", render.HeadOverload + ": `get`", render.HeadCharts, render.HeadProfiles} {
		i := strings.Index(report, "\n"+h)
		require.GreaterOrEqual(t, i, 0, "heading %q missing from the report", h)
		assert.Greater(t, i, last, "heading %q out of order", h)
		last = i
	}
	for _, section := range []string{render.HeadResults, render.HeadOverload} {
		body := sectionOf(report, section)
		for _, pool := range []string{"direct", "lifo"} {
			assert.Regexp(t, regexp.MustCompile(`(?m)^\| `+pool+` \|`), body, "%s: no table row for %s", section, pool)
		}
	}
	assert.Regexp(t, regexp.MustCompile(`(?m)^\| CPUs \| (kvserver on CPUs|kvserver and the loader share CPUs) `), report, "environment says nothing about the CPUs")
	assert.Regexp(t, regexp.MustCompile(`\(\d+ loops\)`), report, "the loader's loops")
	require.NotNil(t, c.Workloads[0].Variants[0].Closed, "direct's closed loop")
	assert.Len(t, c.Workloads[0].Variants[0].Closed.Rounds, 2)
	assert.Nil(t, c.Workloads[0].Variants[1].Closed, "only direct's saturation is cross-checked")
	assert.Contains(t, strings.Join(rep.Findings, "\n"), "`get` cross-check, direct's saturation")
	for _, l := range c.Loader {
		assert.Positive(t, l.Loader.CPUs, "%s %s: the loader's CPUs", l.Variant, l.Step)
		assert.Positive(t, l.Server.CPUs, "%s %s: kvserver's CPUs", l.Variant, l.Step)
	}
	steps := c.Workloads[0].Steps
	require.NotNil(t, steps, "the step plan is kept in compare.json, with its workload")
	for _, v := range c.Workloads[0].Variants {
		require.NotNil(t, v.Fixed)
		assert.Equal(t, steps.Fixed.Conns, v.Fixed.ConnsStart, "%s: the fixed step's planned connections, the same for every variant", v.Name)
		assert.GreaterOrEqual(t, v.Fixed.ConnsStart, plan.MinConns, "%s: sized by Little's law, at least %d", v.Name, plan.MinConns)
		require.NotNil(t, v.Overload)
		assert.Positive(t, v.Overload.ProbeCPUPerRequest, "%s: the probe's CPU per request", v.Name)
		assert.Equal(t, steps.Overload.Conns, v.Overload.ConnsStart, "%s: the overload step's planned connections", v.Name)
	}
	assert.NotContains(t, report, "kvserver | version unknown", "kvserver_config_info's version not read")
	assert.Contains(t, report, "served a closed loop of GETs for 100ms", "the warm-up is said")
	direct := c.Workloads[0].Variants[0]
	require.Len(t, direct.Sat, 1)
	assert.Positive(t, direct.Sat[0].Anchor, "the search ran its closed loop first")
	assert.Contains(t, report, "each after a closed loop of 1 × 300ms on its own server", "the anchor is said")
	var sat saturate.Saturation
	b, err = os.ReadFile(filepath.Join(c.Dir, direct.Sat[0].Dir, "saturate.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &sat))
	require.NotNil(t, sat.ClosedLoop, "saturate.json keeps the closed loop that bounded the search")
	assert.Len(t, sat.ClosedLoop.Rounds, 1)
	assert.Equal(t, direct.Sat[0].Anchor, sat.Anchor)

	require.NotEmpty(t, rep.Charts)
	for _, ch := range rep.Charts {
		assertSVG(t, filepath.Join(c.Dir, ch.Path))
		assert.Contains(t, report, "]("+ch.Path+")", "chart %s not linked from the report", ch.Path)
	}

	require.Len(t, c.Profiles, 2, "one profile set per pool")
	for _, ps := range c.Profiles {
		for _, kind := range plan.ProfileKinds {
			require.Contains(t, ps.Files, kind, "%s: %s profile missing: %v", ps.Variant, kind, ps.Errors)
			f, err := os.Open(filepath.Join(c.Dir, ps.Files[kind]))
			require.NoError(t, err)
			p, err := profile.Parse(f)
			f.Close()
			require.NoError(t, err, "%s %s does not load with pprof", ps.Variant, kind)
			assert.NotEmpty(t, p.SampleType, "%s %s has no sample types", ps.Variant, kind)
		}
		if ps.Variant == "lifo" {
			assert.Contains(t, ps.Diffs, "cpu", "no cpu diff against direct: %v", ps.DiffErrs)
			assert.Contains(t, ps.Diffs, "mutex", "no mutex diff against direct: %v", ps.DiffErrs)
		}
		if _, err := exec.LookPath("dot"); err == nil {
			assertSVG(t, filepath.Join(c.Dir, ps.SVG))
		} else {
			assert.Contains(t, report, dotMissing)
		}
	}
	assert.Regexp(t, regexp.MustCompile(`(?m)^\| direct \| - \| ((≥ )?[0-9,]+(–[0-9,]+)?, validated \(1\.00×\)|≥ [0-9,]+, loader-bound)`), report, "direct's saturation as its bracket, validated, and its ratio to itself (or a lower bound)")
	require.NotNil(t, direct.Sat[0].Bracket, "direct: the search's bracket")
	assert.Equal(t, direct.Sat[0].Bracket.Lo, direct.Sat[0].Rate, "direct: a validated rate is the bracket's lower end")
	lifo := c.Workloads[0].Variants[1]
	assert.Empty(t, lifo.Sat, "one search a pool bounds no interval: direct's alone is searched, the pairs compare")
	require.NotNil(t, lifo.Paired, "lifo's rounds paired with direct's")
	assert.Equal(t, "direct", lifo.Paired.Against)
	assert.Len(t, lifo.Paired.Base, 2)
	assert.Len(t, lifo.Paired.Variant, 2)
	assert.True(t, lifo.Paired.Alternating, "the second pair ran lifo's round first")
	assert.Nil(t, c.Workloads[0].Variants[0].Paired, "direct is not paired with itself")
	assert.Contains(t, report, render.HeadPaired+": `get`")
	assert.Contains(t, report, "No interval is bounded: fewer than 6 pairs ran")
	var back result.Comparison
	b, err = os.ReadFile(filepath.Join(c.Dir, result.File))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &back), "compare.json reads back")
	require.Len(t, back.Workloads, 1)
	assert.Equal(t, c.Workloads[0].BaseRate, back.Workloads[0].BaseRate)
	assert.FileExists(t, filepath.Join(c.Dir, "runs", "get", "lifo", "fixed", "summary.json"))

	// Rendering the run again from its compare.json gives the same report
	// and the same charts, byte for byte.
	charts := map[string][]byte{}
	for _, ch := range rep.Charts {
		charts[ch.Path] = mustRead(t, filepath.Join(c.Dir, ch.Path))
	}
	_, again, err := Render(c.Dir)
	require.NoError(t, err)
	assert.Equal(t, report, string(mustRead(t, filepath.Join(c.Dir, render.ReportFile))), "the rendered report differs from the run's own")
	require.Equal(t, rep.Charts, again.Charts)
	for _, ch := range again.Charts {
		assert.Equal(t, charts[ch.Path], mustRead(t, filepath.Join(c.Dir, ch.Path)), "%s drawn again differs", ch.Path)
	}

	// A compare.json without the distributions gets them from the runs'
	// interval logs; a version-0 one without the options renders with its
	// preset's defaults.
	var raw map[string]any
	require.NoError(t, json.Unmarshal(b, &raw))
	delete(raw, "Version")
	delete(raw, "Options")
	for _, v := range raw["Workloads"].([]any)[0].(map[string]any)["Variants"].([]any) {
		delete(v.(map[string]any)["Fixed"].(map[string]any), "Distribution")
	}
	b, err = json.Marshal(raw)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(c.Dir, result.File), b, 0o644))
	old, _, err := Render(c.Dir)
	require.NoError(t, err)
	assert.Equal(t, plan.DefaultOptions().Repeat, old.Options.Repeat)
	assert.Equal(t, "queues", old.Options.Preset)
	for i, v := range old.Workloads[0].Variants {
		d, want := v.Fixed.Distribution, c.Workloads[0].Variants[i].Fixed.Distribution
		require.NotNil(t, d, "%s: no distribution read back", v.Name)
		assert.InEpsilon(t, float64(want.Corrected[4]), float64(d.Corrected[4]), 0.01, "%s: p99 read back", v.Name)
	}
}

// TestRenderRefusesAFolderWithoutAComparison: a clear error, nothing
// written.
func TestRenderRefusesAFolderWithoutAComparison(t *testing.T) {
	dir := t.TempDir()
	_, _, err := Render(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), result.File)
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries)
}

// TestInterruptedRunStillWritesReport cancels the comparison during its
// first saturation search: the servers stop, Run returns without error
// and the report says it was interrupted.
func TestInterruptedRunStillWritesReport(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := plan.DefaultOptions()
	o.Kvserver, o.Pools, o.Workload = kvserverBin, []string{"direct", "fifo"}, "get"
	o.Keys, o.ValueSize, o.Repeat = 200, 10, 1
	o.Timing, o.QuietWait, o.Out = tinyTiming(), 0, t.TempDir()
	// Cancel as soon as the first saturation search reports its start.
	c, _, err := Run(ctx, checked(t, o), cancelOn{pattern: "saturation search", cancel: cancel})
	require.NoError(t, err)
	assert.True(t, c.Interrupted)
	b, err := os.ReadFile(filepath.Join(c.Dir, render.ReportFile))
	require.NoError(t, err)
	assert.Contains(t, string(b), "Interrupted")
	assert.Contains(t, string(b), render.HeadFindings)
}

// TestServerDeathMidStep kills lifo's kvserver as its overload step
// starts: the step is recorded as failed with the server's log, direct's
// numbers stay, and the report lists the failure.
func TestServerDeathMidStep(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o := plan.DefaultOptions()
	o.Preset, o.Kvserver, o.Pools, o.Policies, o.Limits = "policies", kvserverBin, []string{"lifo"}, []string{"reject"}, []string{}
	o.Keys, o.ValueSize, o.Repeat, o.Rate = 200, 10, 1, 1000
	o.MaxConns, o.Timing, o.QuietWait, o.Out = 128, tinyTiming(), 0, t.TempDir()
	c, _, err := runComparison(ctx, checked(t, o), nil, func(step string, v plan.Variant, srv *harness.Server) {
		if v.Name() == "lifo/reject cap=1024" {
			require.NoError(t, srv.Kill())
		}
	})
	require.NoError(t, err)
	require.Len(t, c.Failures, 1, "exactly lifo/reject's step fails: %+v", c.Failures)
	f := c.Failures[0]
	assert.Equal(t, "lifo/reject cap=1024", f.Variant)
	assert.Contains(t, f.Reason, "exited mid-step")
	assert.NotEmpty(t, f.LogTail, "the failure carries kvserver's log")
	require.NotNil(t, c.Workloads[0].Variants[0].Overload, "direct's step still ran")
	b, err := os.ReadFile(filepath.Join(c.Dir, render.ReportFile))
	require.NoError(t, err)
	assert.Contains(t, string(b), render.HeadFailures)
	assert.Contains(t, string(b), "| lifo cap=1024 | reject | not run (see the failed steps)")
	require.NotNil(t, c.Workloads[0].Variants[1].Overload, "lifo at kvserver's defaults still ran")
}

// cancelOn is a log writer that cancels when a line contains pattern.
type cancelOn struct {
	pattern string
	cancel  func()
}

func (c cancelOn) Write(p []byte) (int, error) {
	if strings.Contains(string(p), c.pattern) {
		c.cancel()
	}
	return len(p), nil
}

var _ io.Writer = cancelOn{}

// sectionOf is the text from heading to the next "## " heading.
func sectionOf(report, heading string) string {
	i := strings.Index(report, "\n"+heading)
	if i < 0 {
		return ""
	}
	rest := report[i+1+len(heading):]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		return rest[:j]
	}
	return rest
}

// assertSVG checks that path is a well-formed XML document whose root is
// an <svg> element.
func assertSVG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	dec := xml.NewDecoder(f)
	dec.Strict = false // graphviz writes a DOCTYPE with entities
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "%s is not well-formed XML", path)
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	assert.Equal(t, "svg", root, "%s: root element", path)
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}
