package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A bad -spike, or one the run cannot have, exits 2 naming the flag
// and what is accepted.
func TestSpikeUsageErrorsExitTwo(t *testing.T) {
	f := func(want string, args ...string) {
		t.Helper()
		code, _, errs := invoke(t, append([]string{"attack"}, args...)...)
		assert.Equal(t, 2, code, "%q", args)
		assert.Contains(t, errs, want, "%q", args)
	}
	form := "want RATE:LENGTH or FACTORx:LENGTH[@START], such as 2x:10s or 30000:10s@20s"
	f(`invalid value "2x" for flag -spike: -spike "2x": `+form, "-spike", "2x")
	f(`-spike "x:10s": `+form, "-spike", "x:10s")
	f(`-spike "0x:10s": the rate or factor must be above 0; `+form, "-spike", "0x:10s")
	f(`-spike "abc": `+form, "-spike", "abc")
	f("-spike 2x:10s@20s needs the open model (-rate above 0)", "-spike", "2x:10s", "-rate", "0")
	f("-spike 2x:10s@20s needs -engine fast", "-spike", "2x:10s", "-engine", "vegeta")
	// Without @START the spike starts at -spike-at, 20 s by default.
	f("-spike 2x:10s@20s starts at 20s and lasts 10s, ending at 30s, past -duration 25s", "-spike", "2x:10s", "-duration", "25s")
	f("-spike 2x:10s@16s starts at 16s and lasts 10s, ending at 26s, past -duration 25s", "-spike", "2x:10s", "-spike-at", "16s", "-duration", "25s")
	f("ending at 31s, past -duration 30s", "-spike", "2x:10s@21s", "-spike-at", "1s")
}

// attack -spike runs the piecewise schedule and its summary and report
// say so: 1,000 req/s for 300 ms with 2x:100ms from -spike-at 100ms
// plans 100 + 200 + 100 requests.
func TestAttackWithSpike(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	code, out, errs := invoke(t, "attack", "-target", bare(t), "-rate", "1000", "-duration", "300ms",
		"-spike", "2x:100ms", "-spike-at", "100ms", "-conns", "4", "-q", "-out", dir)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "rate 1000 req/s, spike to 2000 req/s (2x) from 100ms for 100ms")
	assert.Contains(t, out, "on average over the spike and the rest")
	s := readSummary(t, dir)
	assert.Equal(t, uint64(400), s.Planned)
	assert.Equal(t, int64(400), s.Sent)
	assert.InDelta(t, 400/0.3, s.AskedRate, 1e-6, "asked: the average over the run")
	require.NotNil(t, s.Spike)
	assert.Equal(t, 2000.0, s.Spike.Rate)
	assert.Equal(t, 2.0, s.Spike.Factor)
	assert.Equal(t, 1000.0, s.Spike.BaseRate)
	assert.Equal(t, 0.1, s.Spike.AtS)
	assert.Equal(t, 0.1, s.Spike.LengthS)
}
