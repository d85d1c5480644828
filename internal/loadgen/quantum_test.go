package loadgen

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/loadgen/schedule"
)

func TestConfigQuantumBounds(t *testing.T) {
	c := DefaultConfig()
	assert.Zero(t, c.Quantum, "sized by the run unless set")
	require.NoError(t, c.Validate())
	c.Quantum = schedule.MaxQuantum
	require.NoError(t, c.Validate())
	c.Quantum = schedule.MaxQuantum + 1
	assert.ErrorContains(t, c.Validate(), "-quantum 1.000001ms is outside [0, 1ms]")
	c.Quantum = -1
	assert.ErrorContains(t, c.Validate(), "is outside [0, 1ms]")
}
