package compare

import (
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/loadgen/client"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/schedule"
)

func TestMetaConfig(t *testing.T) {
	o := plan.DefaultOptions()
	o.Preset = "metastable"
	p, err := plan.New(&o, 1)
	require.NoError(t, err)
	mp := p.Metastable
	retry, err := client.Named(mp.Models[2])
	require.NoError(t, err)
	lifoDeadlines := mp.Variants[len(mp.Variants)-1]
	require.Equal(t, "lifo+deadlines", lifoDeadlines.Name())
	cfg := metaConfig(config.Default(), mp, retry, lifoDeadlines, 6000, 4096, 2*time.Second)
	assert.Equal(t, 6000.0, cfg.Rate)
	assert.Equal(t, 38*time.Second, cfg.Duration)
	assert.Equal(t, schedule.Spike{Factor: plan.MetaFactor, At: 2 * time.Second, Length: 8 * time.Second}, cfg.Spike)
	assert.Equal(t, time.Second, cfg.Client.Timeout)
	assert.Equal(t, 2, cfg.Client.Retries)
	assert.True(t, cfg.Client.SendDeadline, "+deadlines: the clients send theirs")
	assert.Equal(t, plan.MinConns, cfg.Conns)
	assert.Equal(t, 4096, cfg.MaxConns, "timed-out connections are replaced up to -max-conns")
	require.NoError(t, cfg.Validate())

	noClient, err := client.Named(mp.Models[0])
	require.NoError(t, err)
	none := metaConfig(config.Default(), mp, noClient, mp.Variants[0], 6000, 4096, 2*time.Second)
	assert.Equal(t, 2*time.Second, none.Timeout)
	assert.Equal(t, 2*time.Second, none.Client.Timeout, "the classic client with its wait written out, so that the loader counts its tries")
	assert.Zero(t, none.Client.Retries)
}

// TestClientModels: the plan names the client package's models, in its
// order; none is the classic client, the only one without a timeout.
func TestClientModels(t *testing.T) {
	assert.Equal(t, client.Names(), plan.MetaModels)
	for _, name := range plan.MetaModels {
		m, err := client.Named(name)
		require.NoError(t, err, name)
		require.NoError(t, m.Validate(), name)
		assert.Equal(t, name == plan.NoTimeoutModel, m.Timeout == 0, name)
	}
}

// TestServerCounts: the deltas of kvserver's counters over a run, the
// 503s by reason with the store's deadline drops among them.
func TestServerCounts(t *testing.T) {
	parse := func(text string) map[string]*dto.MetricFamily {
		t.Helper()
		p := expfmt.NewTextParser(model.UTF8Validation)
		f, err := p.TextToMetricFamilies(strings.NewReader(text))
		require.NoError(t, err)
		return f
	}
	before := parse(`# TYPE kvserver_http_requests_total counter
kvserver_http_requests_total{code="200",method="GET"} 10
kvserver_http_requests_total{code="404",method="GET"} 5
kvserver_http_requests_total{code="503",method="GET"} 1
# TYPE kvserver_pool_rejected_total counter
kvserver_pool_rejected_total{pool="lifo",reason="full"} 1
kvserver_pool_rejected_total{pool="lifo",reason="deadline"} 0
# TYPE kvserver_deadline_wasted_total counter
kvserver_deadline_wasted_total 0
`)
	after := parse(`# TYPE kvserver_http_requests_total counter
kvserver_http_requests_total{code="200",method="GET"} 1010
kvserver_http_requests_total{code="404",method="GET"} 105
kvserver_http_requests_total{code="503",method="GET"} 301
# TYPE kvserver_pool_rejected_total counter
kvserver_pool_rejected_total{pool="lifo",reason="full"} 51
kvserver_pool_rejected_total{pool="lifo",reason="deadline"} 200
# TYPE kvserver_deadline_requests_total counter
kvserver_deadline_requests_total 1400
# TYPE kvserver_deadline_dropped_total counter
kvserver_deadline_dropped_total{stage="pool"} 200
kvserver_deadline_dropped_total{stage="store"} 50
# TYPE kvserver_deadline_wasted_total counter
kvserver_deadline_wasted_total 70
`)
	s := serverCounts(before, after)
	assert.Equal(t, int64(1100), s.Ran)
	assert.Equal(t, int64(1400), s.DeadlineRequests)
	assert.Equal(t, int64(250), s.DeadlineDropped)
	assert.Equal(t, int64(70), s.Wasted)
	assert.Equal(t, map[string]int64{"full": 50, "deadline": 200, "deadline (store)": 50}, s.Shed)
}

// TestScheduleSentUnderClients: a spike run asks its schedule's mean
// rate; under a client model the loader kept up when it issued the
// schedule's first tries (a throttled one counts as issued), whatever
// its clients' retries added.
func TestScheduleSentUnderClients(t *testing.T) {
	retry, err := client.Named("retry")
	require.NoError(t, err)
	cfg := config.Default()
	cfg.Rate, cfg.Duration = 1000, 10*time.Second
	cfg.Spike = schedule.Spike{Factor: 2.5, At: 2 * time.Second, Length: 2 * time.Second}
	cfg.Client = retry
	assert.InDelta(t, 1300.0, cfg.AskedRate(), 1e-9, "8 s at 1000, 2 s at 2500")
	res := &record.Result{Config: cfg, Planned: 13000, Sent: 20000, SendSpan: 11 * time.Second,
		Clients: record.ClientTotals{FirstTries: 12500, Retries: 7500, Throttled: 500}}
	rate, unsent := scheduleSent(res)
	assert.InDelta(t, 1300.0, rate, 1e-9, "first tries and throttled ones over the schedule, not the retries")
	assert.Zero(t, unsent)

	res.Clients.FirstTries, res.Clients.Throttled = 12000, 0 // 1,000 first tries never sent
	rate, unsent = scheduleSent(res)
	assert.InDelta(t, 1200.0, rate, 1e-9)
	assert.Equal(t, int64(1000), unsent)

	res.Clients.FirstTries, res.Clients.Throttled = 12900, 400 // refused retries among the throttled
	_, unsent = scheduleSent(res)
	assert.Zero(t, unsent, "capped at the schedule's count")

	plain := &record.Result{Config: config.Default(), Planned: 1000, Sent: 990, SendSpan: time.Second}
	rate, unsent = scheduleSent(plain)
	assert.InDelta(t, 990.0, rate, 1e-9, "no client model: every request sent, over the span it was sent in")
	assert.Equal(t, int64(10), unsent)
}

// TestCalibrationRate: the worst second's rate, bounded so that the
// never-answering run holds at most half of the connections allowed.
func TestCalibrationRate(t *testing.T) {
	assert.Equal(t, 26000.0, calibrationRate(26000, 4096))
	assert.Equal(t, 40960.0, calibrationRate(500000, 4096), "4,096 / 2 connections, each held 50 ms")
	assert.Equal(t, 2.0, calibrationRate(0, 4096), "at least one first try retried once")
}
