package result

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/cpuset"
)

// TestLoadFillsWhatVersion0DidNotKeep: options, step lengths, plan and
// criteria are what its run had; Save and Load round-trip.
func TestLoadFillsWhatVersion0DidNotKeep(t *testing.T) {
	dir := t.TempDir()
	old := `{"Preset": "overload", "Env": {"Cores": 2},
  "Workloads": [{"Workload": "mixed:0.5", "BaseRate": 46000, "Variants": [{"Variant": {"Pool": "direct"}, "Name": "direct"}]}],
  "Findings": ["derived now"], "Charts": [{"Title": "x", "Path": "charts/x.svg"}]}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, File), []byte(old), 0o644))
	c, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, "overload", c.Options.Preset)
	assert.Equal(t, uint64(plan.QuickKeys), c.Options.Keys, "the overload preset's defaults")
	require.NotNil(t, c.Options.Timing)
	assert.Equal(t, plan.OverloadPresetDuration, c.Options.Timing.Overload)
	require.NotNil(t, c.Plan)
	assert.Equal(t, 10.0, c.Plan.OverloadFactor)
	assert.Equal(t, Criteria{MaxErrorRate: 0.001, LoaderBusy: 0.9}, c.Criteria)
	assert.Equal(t, Version, c.Version)

	quick := `{"Preset": "queues", "Options": {"Preset": "queues", "Quick": true, "Keys": 100000, "Repeat": 1, "MaxConns": 4096}}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, File), []byte(quick), 0o644))
	c, err = Load(dir)
	require.NoError(t, err)
	assert.Equal(t, time.Second, c.Options.Timing.ProbeBaseline, "a version-0 quick run's probe")

	c.Workloads = []*WorkloadResult{{Workload: "get", Steps: &plan.Steps{Fixed: &plan.Load{Rate: 28000, Latency: time.Millisecond, Conns: 64, MaxConns: 256}}}}
	c.Published = &Published{From: "results/compare-x"}
	require.NoError(t, Save(dir, c))
	back, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, c, back)

	_, err = Load(t.TempDir())
	assert.ErrorContains(t, err, File)
}

// TestLoadRestatesVersion0MetastableLoaderChecks: a version-0 file's
// metastable checks (asked: the base rate; sent: every attempt) are
// restated against the schedule's mean rate and its first tries, each
// from its own run; checks written since, and other steps, are kept.
func TestLoadRestatesVersion0MetastableLoaderChecks(t *testing.T) {
	tm := plan.MetaTiming{Base: 2 * time.Second, Spike: 4 * time.Second, After: 4 * time.Second, Factor: 2.5}
	c := &Comparison{Preset: "metastable", Plan: &plan.Plan{Metastable: &plan.Metastable{Timing: tm}},
		Metastable: &Metastable{BaseRate: 1000, SpikeRate: 2500, Runs: []*MetaRun{
			{Model: "retry", Variant: "direct", Totals: MetaTotals{FirstTries: 16000, Retries: 9000}},
			{Model: "retry", Variant: "direct", Totals: MetaTotals{FirstTries: 14000, Retries: 9000}},
			{Model: "throttle", Variant: "direct", Totals: MetaTotals{FirstTries: 15500, Throttled: 600}},
		}},
		Loader: []LoaderCheck{
			{Step: "saturate-1 (validation)", Variant: "direct", Asked: 12000, SendRate: 12000, KeptUp: true},
			{Step: "metastable retry", Variant: "direct", Asked: 1000, SendRate: 2500},
			{Step: "metastable retry", Variant: "direct", Asked: 1000, SendRate: 2300},
			{Step: "metastable throttle", Variant: "direct", Asked: 1000, SendRate: 1550},
			{Step: "metastable none", Variant: "direct", Asked: 1600, SendRate: 1234, Scheduled: true},
		}}
	c.restateMetaLoaderChecks()
	l := c.Loader
	assert.Equal(t, 12000.0, l[0].Asked, "a search's step is kept")
	for _, x := range l[1:4] {
		assert.InDelta(t, 1600.0, x.Asked, 1e-9, "6 s at 1,000 and 4 s at 2,500 over 10 s")
		assert.True(t, x.Scheduled)
	}
	assert.InDelta(t, 1600.0, l[1].SendRate, 1e-9, "the first run's first tries, not its retries")
	assert.True(t, l[1].KeptUp)
	assert.InDelta(t, 1400.0, l[2].SendRate, 1e-9, "the second check is the second run's")
	assert.False(t, l[2].KeptUp)
	assert.False(t, c.Metastable.Runs[1].LoaderKeptUp)
	assert.InDelta(t, 1600.0, l[3].SendRate, 1e-9, "throttled first tries were issued; capped at the schedule's")
	assert.True(t, l[3].KeptUp)
	assert.Equal(t, 1234.0, l[4].SendRate, "a check written since is kept")
}

// TestLoadRestatesVersion0Backlogs: a version-0 file's fixed-rate step
// whose loader sent on schedule while its FixedRun fell behind is
// restated as not kept up, by its backlog; a validation its search held
// as kept up, whatever its mean send rate; a validation that failed, an
// overload step and a check written since stay as recorded.
func TestLoadRestatesVersion0Backlogs(t *testing.T) {
	grew := "backlog grew: send lag p99 2.62ms → 72.2ms (median of the last 9 intervals against the 9 before)"
	curve := func(lastPass bool) []CurvePoint {
		return []CurvePoint{{Phase: "ramp", Pass: true}, {Phase: "validate", Pass: !lastPass}, {Phase: "validate", Pass: lastPass}, {Phase: "bisect"}}
	}
	c := &Comparison{Preset: "queues",
		Workloads: []*WorkloadResult{{Workload: "get", Variants: []*VariantResult{
			{Name: "direct", Fixed: &FixedRun{}, Sat: []SatRun{{Repeat: 1, Curve: curve(true)}, {Repeat: 2, Curve: curve(false)}}},
			{Name: "fifo", Fixed: &FixedRun{Behind: grew}},
			{Name: "lifo", Fixed: &FixedRun{Behind: "sent 900 of 1000 req/s asked on schedule, 0 never sent"}},
		}}},
		Loader: []LoaderCheck{
			{Workload: "get", Variant: "direct", Step: ValidationStep(1), Asked: 1000, SendRate: 983},
			{Workload: "get", Variant: "direct", Step: ValidationStep(2), Asked: 1000, SendRate: 983},
			{Workload: "get", Variant: "direct", Step: "fixed", Asked: 700, SendRate: 700, KeptUp: true},
			{Workload: "get", Variant: "fifo", Step: "fixed", Asked: 700, SendRate: 700, KeptUp: true},
			{Workload: "get", Variant: "lifo", Step: "fixed", Asked: 1000, SendRate: 900},
			{Workload: "get", Variant: "fifo", Step: "overload", Asked: 2000, SendRate: 1990, KeptUp: true},
			{Workload: "get", Variant: "lifo", Step: ValidationStep(1), Asked: 1000, SendRate: 1000, Backlog: "backlog grew: in flight"},
		},
	}
	back := loadVersion0(t, c)
	l := back.Loader
	assert.True(t, l[0].KeptUp, "its search held the validation (the last one it ran)")
	assert.False(t, l[1].KeptUp, "its last validation failed: as recorded")
	assert.True(t, l[2].KeptUp)
	assert.Empty(t, l[2].Backlog)
	assert.False(t, l[3].KeptUp, "sent on schedule, and the backlog grew")
	assert.Equal(t, grew, l[3].Backlog)
	assert.False(t, l[4].KeptUp)
	assert.Empty(t, l[4].Backlog, "not sent on schedule: said so, not restated")
	assert.True(t, l[5].KeptUp, "an overload step is judged by what the loader sent")
	assert.Equal(t, "backlog grew: in flight", l[6].Backlog, "a check written since is kept")
	assert.False(t, l[6].KeptUp)
}

// loadVersion0 is c written as a version-0 file and loaded.
func loadVersion0(t *testing.T, c *Comparison) *Comparison {
	t.Helper()
	c.Version = 0
	b, err := json.Marshal(c)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, File), b, 0o644))
	back, err := Load(dir)
	require.NoError(t, err)
	return back
}

// TestLoadUpgradesVersion0Searches: a version-0 search without a bracket
// kept its last candidate as Rate; loaded, Rate is the validated
// saturation (0 where the validation failed) and Candidate the rate
// tried, and a step whose CPU shares were not read has them unknown.
func TestLoadUpgradesVersion0Searches(t *testing.T) {
	c := loadFile(t, `{"Preset": "queues", "Workloads": [{"Workload": "get", "Variants": [{"Name": "direct", "Sat": [
		{"Repeat": 1, "Rate": 9000, "Validated": true, "Curve": [{"Phase": "ramp", "LoaderShare": 0.4, "ServerShare": 0.9}, {"Phase": "validate"}]},
		{"Repeat": 2, "Rate": 8000},
		{"Repeat": 3, "Bracket": {"Lo": 7000, "Hi": 7200}, "Candidate": 7100}]}]}]}`)
	sat := c.Workloads[0].Variants[0].Sat
	assert.Equal(t, 9000.0, sat[0].Rate)
	assert.Equal(t, []CurvePoint{{Phase: "ramp", Loader: cpuset.Use{Share: 0.4}, Server: cpuset.Use{Share: 0.9}},
		{Phase: PhaseValidate, Loader: cpuset.Unknown, Server: cpuset.Unknown}}, sat[0].Curve)
	assert.Equal(t, 0.0, sat[1].Rate, "not validated: no saturation")
	assert.Equal(t, 8000.0, sat[1].Candidate)
	assert.Equal(t, 7100.0, sat[2].Candidate, "a bracketed search is kept")
	assert.Equal(t, []float64{9000}, c.Workloads[0].Variants[0].SatRates())
}

// TestLoadReadsVersion3CPUUse: versions 3 and earlier spelled each
// side's CPU use as flat fields of a step, a round and a loader's check;
// loaded, they are each side's cpuset.Use.
func TestLoadReadsVersion3CPUUse(t *testing.T) {
	c := loadFile(t, `{"Version": 3, "Preset": "queues", "Workloads": [{"Workload": "get", "Variants": [{"Name": "direct",
		"Sat": [{"Curve": [{"Phase": "ramp", "LoaderShare": 0.4, "ServerShare": -1}]}],
		"Closed": {"Rounds": [{"Rate": 1, "LoaderShare": 0.5, "LoaderCPUs": 2, "ServerShare": 0.9, "ServerCPUs": 4}]},
		"Paired": {"Base": [{"LoaderShare": 0.1, "LoaderCPUs": 1}], "Variant": [{"ServerShare": 0.2, "ServerCPUs": 3}]}}]}],
		"Loader": [{"Step": "fixed", "LoaderShare": 0.95, "LoaderCPUs": 8, "ServerShare": -1, "ServerCPUs": 8}]}`)
	v := c.Workloads[0].Variants[0]
	assert.Equal(t, cpuset.Use{Share: 0.4}, v.Sat[0].Curve[0].Loader)
	assert.Equal(t, cpuset.Unknown, v.Sat[0].Curve[0].Server)
	assert.Equal(t, cpuset.Use{Share: 0.5, CPUs: 2}, v.Closed.Rounds[0].Loader)
	assert.Equal(t, cpuset.Use{Share: 0.9, CPUs: 4}, v.Closed.Rounds[0].Server)
	assert.Equal(t, cpuset.Use{Share: 0.1, CPUs: 1}, v.Paired.Base[0].Loader)
	assert.Equal(t, cpuset.Use{Share: 0.2, CPUs: 3}, v.Paired.Variant[0].Server)
	assert.Equal(t, cpuset.Use{Share: 0.95, CPUs: 8}, c.Loader[0].Loader)
	assert.Equal(t, cpuset.Use{Share: -1, CPUs: 8}, c.Loader[0].Server)
}

// loadFile is the comparison that text, a compare.json, loads as.
func loadFile(t *testing.T, text string) *Comparison {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, File), []byte(text), 0o644))
	c, err := Load(dir)
	require.NoError(t, err)
	return c
}

// TestLoadMovesVersion3StepPlansToTheirWorkloads: before version 4 the
// step plans were the plan's, one per workload that got that far, named
// by it; loaded, each is its workload's, and a workload that got no plan
// has none.
func TestLoadMovesVersion3StepPlansToTheirWorkloads(t *testing.T) {
	dir := t.TempDir()
	old := `{"Version": 3, "Preset": "queues", "Options": {"Preset": "queues", "Timing": {}}, "Criteria": {"MaxErrorRate": 0.001},
  "Plan": {"Workloads": ["get", "put", "mixed:0.5"], "Steps": [
    {"Workload": "mixed:0.5", "Overload": {"Rate": 90000, "Latency": 2000000, "Conns": 360, "MaxConns": 4096}},
    {"Workload": "get", "Fixed": {"Rate": 28000, "Latency": 1000000, "Conns": 64, "MaxConns": 256}}]},
  "Workloads": [{"Workload": "get"}, {"Workload": "put"}, {"Workload": "mixed:0.5"}]}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, File), []byte(old), 0o644))
	c, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, Version, c.Version)
	assert.Equal(t, &plan.Steps{Fixed: &plan.Load{Rate: 28000, Latency: time.Millisecond, Conns: 64, MaxConns: 256}}, c.Workloads[0].Steps)
	assert.Nil(t, c.Workloads[1].Steps, "put got no step plan")
	assert.Equal(t, &plan.Steps{Overload: &plan.Load{Rate: 90000, Latency: 2 * time.Millisecond, Conns: 360, MaxConns: 4096}}, c.Workloads[2].Steps)
}

// TestLoadRefusesANewerVersion: a file this loadtest cannot read says so
// rather than rendering what it misreads.
func TestLoadRefusesANewerVersion(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, File), []byte(`{"Version": 99, "Preset": "queues"}`), 0o644))
	_, err := Load(dir)
	assert.ErrorContains(t, err, "newer loadtest")
}

// TestLoadUpgradesEveryCommittedComparison: every compare.json in the
// repository (the published reports and the golden reports' fixtures),
// kept as measured, loads as the current version, and saving that
// changes nothing on a second load: the upgrade is done once, on load.
func TestLoadUpgradesEveryCommittedComparison(t *testing.T) {
	files, err := filepath.Glob("../../../docs/report/*/" + File)
	require.NoError(t, err)
	fixtures, err := filepath.Glob("../render/testdata/*/" + File)
	require.NoError(t, err)
	files = append(files, fixtures...)
	require.NotEmpty(t, fixtures)
	for _, f := range files {
		c, err := Load(filepath.Dir(f))
		require.NoError(t, err, f)
		assert.Equal(t, Version, c.Version, f)
		assert.NotNil(t, c.Plan, f)
		assert.NotNil(t, c.Options.Timing, f)
		assert.NotEqual(t, Criteria{}, c.Criteria, f)
		for _, w := range c.Workloads {
			for _, v := range w.Variants {
				for _, s := range v.Sat {
					assert.True(t, s.Rate == 0 || s.Validated, "%s: %s's Rate is a validated saturation", f, v.Name)
				}
			}
		}
		dir := t.TempDir()
		require.NoError(t, Save(dir, c))
		again, err := Load(dir)
		require.NoError(t, err, f)
		assert.Equal(t, c, again, "%s: loading it again as the current version changes nothing", f)
	}
}
