package record

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestUsefulP99OverTheRun: the run's useful p99 is over every useful
// answer, whatever interval it ended in (the intervals' histograms
// merged), not a mean of the intervals' p99s; failures count in none.
func TestUsefulP99OverTheRun(t *testing.T) {
	s := &clientStats{interval: int64(time.Second)}
	_, _, p99 := s.fill(nil)
	assert.Zero(t, p99, "no useful answer, no p99")
	// 99 fast answers in the first second, 2 slow ones in the third.
	for i := range 99 {
		s.record(&Record{Sent: int64(i) * int64(time.Millisecond), Latency: int64(time.Millisecond)})
	}
	for i := range 2 {
		s.record(&Record{Sent: 2*int64(time.Second) + int64(i), Latency: int64(time.Second)})
	}
	s.record(&Record{Sent: int64(time.Second), Latency: int64(5 * time.Second), Code: 503, errIdx: 1})
	_, _, got := s.fill(nil)
	assert.InEpsilon(t, float64(time.Second), float64(got), 0.01, "the 100th of 101 answers is a slow one: %v", got)
}
