package compare

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
)

// A writes run's two loads: the read stream an open model of GETs over
// the filled ids from the agreed start, growing its connections up to
// -max-conns; the flood a closed loop of PUTs of the flood's size over
// twice the ids, on its own fixed connections, for FloodFor.
func TestWritesConfigs(t *testing.T) {
	o := plan.DefaultOptions()
	o.Preset = "writes"
	o.ApplyDefaults(false, false)
	p, err := plan.New(&o, 1)
	require.NoError(t, err)
	base := config.Default()
	base.Workload.Keys, base.Workload.ValueSize = o.Keys, o.ValueSize
	start := time.Now().Add(time.Second)
	reads, flood := writesConfigs(base, p.Writes, 4096, start)
	require.NoError(t, reads.Validate())
	require.NoError(t, flood.Validate())
	assert.Equal(t, workload.Get, reads.Workload.Mix)
	assert.Equal(t, uint64(100_000), reads.Workload.Keys)
	assert.Equal(t, 3000.0, reads.Rate)
	assert.Equal(t, 40*time.Second, reads.Duration)
	assert.Equal(t, start, reads.StartAt)
	assert.Equal(t, plan.MinConns, reads.Conns)
	assert.Equal(t, 4096, reads.MaxConns)
	assert.Equal(t, workload.Put, flood.Workload.Mix)
	assert.Equal(t, uint64(200_000), flood.Workload.Keys, "fresh ids and filled ones")
	assert.Equal(t, 16<<10, flood.Workload.ValueSize)
	assert.Zero(t, flood.Rate, "a closed loop")
	assert.Equal(t, 20*time.Second, flood.Duration)
	assert.Equal(t, 256, flood.Conns)
	assert.Equal(t, 256, flood.MaxConns, "its writers are fixed")
	assert.NotEqual(t, reads.Seed, flood.Seed)
	assert.True(t, flood.StartAt.IsZero(), "started FloodAt after the reads' start by the runner")
}

// kvserver's metrics are read generically by name: every series of the
// families the preset reads, labels and all; families it does not serve
// are absent, others ignored.
func TestWritesValues(t *testing.T) {
	text := `# TYPE kvserver_pebble_write_stalls_total counter
kvserver_pebble_write_stalls_total 3
# TYPE kvserver_pebble_l0_sublevels gauge
kvserver_pebble_l0_sublevels 7
# TYPE kvserver_admission_rejected_total counter
kvserver_admission_rejected_total{class="read",reason="queue"} 12
kvserver_admission_rejected_total{class="write",reason="io"} 40
# TYPE kvserver_admission_write_paced gauge
kvserver_admission_write_paced 1
# TYPE go_goroutines gauge
go_goroutines 50
`
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{
		result.MetricWriteStalls: 3,
		result.MetricL0Sublevels: 7,
		result.MetricWritePaced:  1,
		`kvserver_admission_rejected_total{class="read",reason="queue"}`: 12,
		`kvserver_admission_rejected_total{class="write",reason="io"}`:   40,
	}, writesValues(families))
}
