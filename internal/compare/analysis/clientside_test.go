package analysis

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/compare/result"
)

func TestClientFitsTheWorstSecond(t *testing.T) {
	cs := &result.ClientSide{LoaderCPUs: 2, Answered: 20 * time.Microsecond, TimedOut: 50 * time.Microsecond,
		MostAttempts: map[string]float64{"none": 1, "untuned": 6, "budget": 1.2}}
	fits := ClientFits(cs, []string{"none", "untuned", "budget", "unmeasured"}, 4000, 4)
	require.Len(t, fits, 3, "a model without its most attempts is left out")

	none := fits[0] // 4,000 attempts/s × 50 µs (the dearer cost) = 0.2 CPU of 2
	assert.Equal(t, "none", none.Model)
	assert.InDelta(t, 4000, none.Attempts, 1e-9)
	assert.InDelta(t, 0.2, none.CPUs, 1e-9)
	assert.InDelta(t, 0.1, none.Share, 1e-9)
	assert.True(t, none.Fits)
	assert.True(t, none.Sendable)
	assert.Equal(t, 1, none.NeedCPUs)

	untuned := fits[1] // 24,000 attempts/s × 50 µs = 1.2 CPUs, under 0.7 × 2
	assert.InDelta(t, 1.2, untuned.CPUs, 1e-9)
	assert.True(t, untuned.Fits)
	assert.Equal(t, 2, untuned.NeedCPUs, "1.2 CPUs at 70 % need 2")
	assert.Equal(t, 4, untuned.FitSlots, "4 slots × 1.4 / 1.2, rounded down")

	one := ClientFits(&result.ClientSide{LoaderCPUs: 1, Answered: 50 * time.Microsecond, TimedOut: 20 * time.Microsecond,
		MostAttempts: cs.MostAttempts}, []string{"untuned"}, 4000, 4)[0]
	assert.False(t, one.Fits, "1.2 CPUs cannot fit 70 % of 1")
	assert.True(t, one.Sendable, "its first tries alone, 4,000 at 50 µs, take 0.2 CPU")
	fast := ClientFits(&result.ClientSide{LoaderCPUs: 1, Answered: 20 * time.Microsecond, TimedOut: 20 * time.Microsecond,
		MostAttempts: cs.MostAttempts}, []string{"none"}, 40000, 4)[0]
	assert.False(t, fast.Sendable, "40,000 first tries at 20 µs take 0.8 of 1 CPU")
	assert.InDelta(t, 1.2, one.Share, 1e-9, "the dearer cost is the answered one here")
	assert.Equal(t, 2, one.NeedCPUs)
	assert.Equal(t, 2, one.FitSlots, "4 slots × 0.7 / 1.2 = 2.33")

	assert.Nil(t, ClientFits(nil, []string{"none"}, 4000, 4), "nothing measured, nothing said")
}
