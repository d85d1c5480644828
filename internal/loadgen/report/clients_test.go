package report

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/latency"
	"github.com/kvpool/kvpool/internal/loadgen/client"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/record"
)

// A run under a client model says what its clients did, in the printed
// report and in summary.json; a run without one says nothing of it.
func TestClientsInReportAndSummary(t *testing.T) {
	r := record.Result{Config: config.Default(), Elapsed: 10 * time.Second,
		Corrected: latency.New(), Uncorrected: latency.New(), SendLag: latency.New()}
	assert.Empty(t, ClientsText(&r))
	s := Summarize(&r, nil)
	assert.Nil(t, s.Client)
	assert.Nil(t, s.Clients)

	r.Config.Client = client.Model{Timeout: time.Second, Retries: 2}
	r.Clients = record.ClientTotals{FirstTries: 1000, Retries: 500, Throttled: 20, Useful: 900, Timeouts: 300, Shed: 200, GaveUp: 100}
	line := ClientsText(&r)
	for _, want := range []string{"1000 first tries + 500 retries (×1.50)", "20 throttled", "900 useful answers (90.0/s)", "300 timeouts", "200 503s", "100 given up"} {
		assert.Contains(t, line, want)
	}
	s = Summarize(&r, nil)
	require.NotNil(t, s.Clients)
	assert.Equal(t, r.Clients, *s.Clients)
	assert.Equal(t, r.Config.Client, *s.Client)
	assert.InDelta(t, 1.5, s.Amplification, 1e-9)
	assert.InDelta(t, 90.0, s.UsefulGoodput, 1e-9)
}
