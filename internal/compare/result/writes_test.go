package result

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// samplesOf are one-second samples of L0 sublevels, the first at 0.5 s.
func samplesOf(l0 ...float64) []ServerSample {
	var out []ServerSample
	for i := range l0 {
		out = append(out, ServerSample{T: float64(i) + 0.5, Values: map[string]float64{MetricL0Sublevels: l0[i]}})
	}
	return out
}

// The store has absorbed a flood (2 s to 6 s here) at the first sample
// from its end on with L0 back under the point at which compactions out
// of it start, or back to where it was before the flood where that was
// higher.
func TestAbsorbedAt(t *testing.T) {
	assert.Equal(t, 8.5, AbsorbedAt(samplesOf(1, 1, 4, 8, 12, 12, 12, 9, 3, 1), 2, 6), "L0 at 3 at 8.5 s")
	assert.Equal(t, 9.5, AbsorbedAt(samplesOf(1, 1, 4, 8, 12, 12, 12, 9, 4, 1), 2, 6), "a compaction was still due at 4")
	assert.Equal(t, 8.5, AbsorbedAt(samplesOf(5, 5, 8, 8, 12, 12, 12, 9, 5, 5), 2, 6), "5 as before the flood")
	assert.Equal(t, 6.5, AbsorbedAt(samplesOf(1, 1, 4, 2, 3, 3, 2, 1), 2, 6), "absorbed as the flood ended")
	assert.Zero(t, AbsorbedAt(samplesOf(1, 1, 4, 8, 12, 12, 12, 9), 2, 6), "the samples end first")
	bare := []ServerSample{{T: 0.5, Values: map[string]float64{}}, {T: 9.5, Values: map[string]float64{MetricL0Sublevels: 1}}}
	assert.Zero(t, AbsorbedAt(bare, 2, 6), "no L0 before the flood")
}

// Where kvserver serves the point at which its store starts compacting
// L0, the store has absorbed the flood one sublevel under it.
func TestAbsorbedAtTheServedCompactionPoint(t *testing.T) {
	samples := samplesOf(1, 1, 4, 8, 12, 12, 12, 9, 5, 3, 1)
	for i := range samples {
		samples[i].Values[MetricL0CompactSublevels] = 6
	}
	assert.Equal(t, 8.5, AbsorbedAt(samples, 2, 6), "5 is under 6")
	for i := range samples {
		samples[i].Values[MetricL0CompactSublevels] = 2
	}
	assert.Equal(t, 10.5, AbsorbedAt(samples, 2, 6), "1, as before the flood")
}
