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

// TestStormSlots: a model whose worst second fits the loader's room
// keeps the plan's store; one over it gets the largest power of two of
// slots its worst second would fit at (the spike scales with the
// store), 1 where not even one would.
func TestStormSlots(t *testing.T) {
	cs := &result.ClientSide{LoaderCPUs: 1, Answered: 20 * time.Microsecond, TimedOut: 60 * time.Microsecond,
		MostAttempts: map[string]float64{"none": 1, "untuned": 6, "budget": 1.2, "storm": 200}}
	got := map[string]int{}
	for _, f := range ClientFits(cs, []string{"none", "untuned", "budget", "storm"}, 10000, 16) {
		got[f.Model] = StormSlots(f, 16)
	}
	// Each attempt at 60 µs, 0.7 of one CPU: none's 10,000/s take 0.6
	// (fits); budget's 12,000/s 0.72 (15 slots would fit: 8); untuned's
	// 60,000/s 3.6 (3 would: 2); storm's 2,000,000/s 120 (none would: 1).
	assert.Equal(t, map[string]int{"none": 16, "budget": 8, "untuned": 2, "storm": 1}, got)
	assert.Equal(t, 4, StormSlots(ClientFit{Fits: true}, 4), "fits: the plan's store")
	assert.Equal(t, 1, StormSlots(ClientFit{FitSlots: 5}, 1), "one slot is the least")
}

// TestStormStores: the models that fit stay at the plan's store; the
// others go to smaller ones, each searched once, the largest first; a
// model that does not fit the spike measured there goes down again; a
// store whose search validated nothing loses its models.
func TestStormStores(t *testing.T) {
	cs := &result.ClientSide{LoaderCPUs: 1, Answered: 20 * time.Microsecond, TimedOut: 60 * time.Microsecond,
		MostAttempts: map[string]float64{"none": 1, "untuned": 6, "retry": 3, "budget": 1.2}}
	models := []string{"none", "untuned", "retry", "budget"}
	var searched []int
	// Smaller stores serve more per slot than the plan's (10,000/s of
	// spike at 16 slots): 1,000 per slot at 4 and below.
	search := func(slots int) (float64, bool) {
		searched = append(searched, slots)
		return 1000 * float64(slots), true
	}
	got := StormStores(cs, models, 10000, 16, search)
	// At 16 (60 µs an attempt, room 0.7 CPU): none fits; budget 0.72 →
	// 8; retry 1.8 → 6 slots would: 4; untuned 3.6 → 3: 2. At 8 budget's
	// spike of 8,000 takes 0.58: fits; at 4 retry's 12,000 attempts 0.72:
	// down to 2; at 2 untuned's 12,000 0.72 and retry's 6,000 0.36: 1 and 2.
	assert.Equal(t, map[string]int{"none": 16, "budget": 8, "retry": 2, "untuned": 1}, got)
	assert.Equal(t, []int{8, 4, 2, 1}, searched, "each store once, the largest first")

	failing := func(slots int) (float64, bool) { return 0, slots != 2 }
	got = StormStores(cs, models, 10000, 16, failing)
	assert.Equal(t, map[string]int{"none": 16, "budget": 8, "retry": 4}, got, "the store of 2 validated nothing: untuned is not run")
	assert.Equal(t, map[string]int{"none": 16, "untuned": 16, "retry": 16, "budget": 16}, StormStores(nil, models, 10000, 16, search), "nothing measured: the plan's store")
}
