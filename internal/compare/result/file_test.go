package result

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/compare/plan"
)

// TestLoadFillsWhatAnOlderComparisonDidNotKeep: options, step lengths,
// plan and criteria are what its run had; Save and Load round-trip.
func TestLoadFillsWhatAnOlderComparisonDidNotKeep(t *testing.T) {
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
	assert.Nil(t, c.Plan.StepsOf("mixed:0.5"), "no step plan then")
	assert.Equal(t, Criteria{MaxErrorRate: 0.001, LoaderBusy: 0.9}, c.Criteria)

	quick := `{"Preset": "queues", "Options": {"Preset": "queues", "Quick": true, "Keys": 100000, "Repeat": 1, "MaxConns": 4096}}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, File), []byte(quick), 0o644))
	c, err = Load(dir)
	require.NoError(t, err)
	assert.Equal(t, time.Second, c.Options.Timing.ProbeBaseline, "a quick run's probe before it became 500 ms")

	c.Plan.Steps = []*plan.Steps{{Workload: "get", Fixed: &plan.Load{Rate: 28000, Latency: time.Millisecond, Conns: 64, MaxConns: 256}}}
	c.Published = &Published{From: "results/compare-x"}
	require.NoError(t, Save(dir, c))
	back, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, c, back)

	_, err = Load(t.TempDir())
	assert.ErrorContains(t, err, File)
}
