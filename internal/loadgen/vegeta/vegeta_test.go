package vegeta

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	vegetalib "github.com/tsenart/vegeta/v12/lib"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/engine"
	"github.com/kvpool/kvpool/internal/loadgen/loadgentest"
	"github.com/kvpool/kvpool/internal/loadgen/record"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
)

// The vegeta engine records the same things through vegeta's attacker as
// the fast engine does through its own: both distributions, every status,
// the interval logs and results.bin.
func TestVegetaEngineRecordsBothDistributions(t *testing.T) {
	url := loadgentest.ServeHandler(t, loadgentest.MixedStatuses)

	dir := t.TempDir()
	cfg := config.Default()
	cfg.Target = url
	cfg.Engine, cfg.Rate, cfg.Duration = config.EngineVegeta, 500, 400*time.Millisecond
	cfg.Conns, cfg.MaxConns, cfg.Progress = 4, 4, 0
	cfg.Workload.Keys, cfg.Workload.ValueSize = 1000, 64
	cfg.Workload.Mix = workload.Mix{Get: 0.5, Put: 0.3, Delete: 0.2}
	cfg.Out = dir
	res, err := engine.Run(context.Background(), cfg, nil)
	require.NoError(t, err)
	require.NoError(t, res.OutputErr)
	// vegeta stops pacing once the duration has passed, so a loaded machine
	// gets fewer than the 200 planned: every count must agree with what
	// was sent, whatever that was.
	sent := res.Sent
	require.Positive(t, sent)
	assert.LessOrEqual(t, sent, int64(res.Planned))
	assert.Equal(t, uint64(200), res.Planned)
	assert.Zero(t, res.ErrorCount)
	assert.Equal(t, sent, res.Corrected.TotalCount())
	assert.Equal(t, sent, res.Uncorrected.TotalCount())
	assert.Equal(t, sent, res.Codes[200]+res.Codes[404]+res.Codes[201]+res.Codes[202])
	// The targeter draws operations in sequence, one per request sent, so
	// the first `sent` picks say exactly how many DELETEs went through vegeta.
	pick := workload.NewPicker(cfg.Workload, cfg.Seed)
	var deletes int64
	for seq := range uint64(sent) {
		if op, _ := pick.Next(seq); op == api.Delete {
			deletes++
		}
	}
	assert.Equal(t, deletes, res.Codes[202], "DELETEs go through vegeta too")
	assert.GreaterOrEqual(t, res.Corrected.Max(), res.Uncorrected.Max(), "corrected latencies are never below the uncorrected ones")

	f, err := os.Open(filepath.Join(dir, record.ResultsFile))
	require.NoError(t, err)
	defer f.Close()
	dec := vegetalib.NewDecoder(f)
	n := 0
	for {
		var r vegetalib.Result
		if err := dec.Decode(&r); err != nil {
			require.True(t, errors.Is(err, io.EOF), err)
			break
		}
		n++
	}
	assert.Equal(t, sent, int64(n))
	hs, err := record.ReadIntervalLog(filepath.Join(dir, record.CorrectedLogFile))
	require.NoError(t, err)
	assert.NotEmpty(t, hs)
}

func TestKeyOf(t *testing.T) {
	assert.Equal(t, uint64(42), keyOf("http://127.0.0.1:1/v0/entity?id=42"))
	assert.Zero(t, keyOf("http://127.0.0.1:1/v0/status"))
}
