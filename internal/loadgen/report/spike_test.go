package report

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/latency"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/schedule"
)

func TestSpikeText(t *testing.T) {
	f := func(want string, sp schedule.Spike) {
		t.Helper()
		c := config.Config{Rate: 1000, Duration: time.Minute, Spike: sp}
		assert.Equal(t, want, SpikeText(&c))
	}
	f("spike to 2000 req/s (2x) from 20s for 10s", schedule.Spike{Factor: 2, At: 20 * time.Second, Length: 10 * time.Second})
	f("spike to 30000 req/s from 0s for 1m0s", schedule.Spike{Rate: 30000, Length: time.Minute})
	f("", schedule.Spike{})
}

// A run with a spike says so in summary.json (its rate, start, length)
// and in the report, whose asked rate is the average over the run.
func TestSpikeSummaryAndReport(t *testing.T) {
	r := &record.Result{Config: config.Default(), Planned: 80_000, Sent: 80_000, Elapsed: 70 * time.Second,
		Uncorrected: latency.New(), Corrected: latency.New(), SendLag: latency.New()}
	r.Config.Rate, r.Config.Duration = 1000, 70*time.Second
	r.Config.Spike = schedule.Spike{Factor: 2, At: 20 * time.Second, Length: 10 * time.Second}
	s := Summarize(r, nil)
	require.NotNil(t, s.Spike)
	assert.Equal(t, SpikeSummary{Rate: 2000, Factor: 2, BaseRate: 1000, AtS: 20, LengthS: 10}, *s.Spike)
	assert.InDelta(t, 80_000.0/70, s.AskedRate, 1e-9)

	var out bytes.Buffer
	Print(&out, r)
	assert.Contains(t, out.String(), "rate 1000 req/s, spike to 2000 req/s (2x) from 20s for 10s\n")
	assert.Contains(t, out.String(), "(asked 1143 on average over the spike and the rest: ")
	assert.Empty(t, r.Warnings(), "80,000 sent in 70 s is what the schedule asked")

	r.Config.Spike = schedule.Spike{}
	assert.Nil(t, Summarize(r, nil).Spike)
}
