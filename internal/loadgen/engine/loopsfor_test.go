package engine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// -loops 0 chooses the fewest loops the rate needs, every CPU for a
// closed loop or a saturation search, and never more than the CPUs or
// the connections.
func TestLoopsForChoosesTheFewestTheRateNeeds(t *testing.T) {
	per := OneLoopRate * loopHeadroom // "{per}" in the reasons below
	f := func(rate float64, conns, cpus int, search bool, want int, why string) {
		t.Helper()
		n, gotWhy := loopsFor(rate, conns, cpus, search)
		assert.Equal(t, want, n, "rate %v, conns %d, cpus %d, search %v", rate, conns, cpus, search)
		assert.Equal(t, strings.ReplaceAll(why, "{per}", thousands(per)), gotWhy)
	}
	f(5000, 64, 2, false, 1, "1 loop: 5,000 req/s is within one loop's ~{per} req/s")
	f(40_000, 64, 2, false, 1, "1 loop: 40,000 req/s is within one loop's ~{per} req/s")
	f(per, 64, 16, false, 1, "1 loop: "+thousands(per)+" req/s is within one loop's ~{per} req/s")
	f(per+1, 64, 16, false, 2, "2 loops: "+thousands(per+1)+" req/s needs 2 at ~{per} req/s each")
	f(3.5*per, 64, 16, false, 4, "4 loops: "+thousands(3.5*per)+" req/s needs 4 at ~{per} req/s each")
	f(3.5*per, 64, 2, false, 2, "2 loops: "+thousands(3.5*per)+" req/s needs 4 at ~{per} req/s each; capped at 2, one per CPU of the 2 CPUs")
	f(3.5*per, 3, 16, false, 3, "3 loops: "+thousands(3.5*per)+" req/s needs 4 at ~{per} req/s each; capped at 3, one per connection (-conns 3)")
	f(3.5*per, 64, 1, false, 1, "1 loop: "+thousands(3.5*per)+" req/s needs 4 at ~{per} req/s each; capped at 1, one per CPU of the 1 CPU")
	f(1e12+1, 64, 8, false, 8, "8 loops: 1,000,000,000,001 req/s needs "+thousands(float64(int(1e12/per)+1))+" at ~{per} req/s each; capped at 8, one per CPU of the 8 CPUs")
	// A closed loop or a saturation search: every CPU, at most a loop per connection.
	f(0, 64, 2, false, 2, "2 loops: a closed loop takes every CPU it may, one per CPU of the 2 CPUs")
	f(0, 1, 2, false, 1, "1 loop: a closed loop takes every CPU it may, one per connection (-conns 1)")
	f(0, 64, 1, false, 1, "1 loop: a closed loop takes every CPU it may, one per CPU of the 1 CPU")
	f(5000, 64, 8, true, 8, "8 loops: a saturation search must not be bounded by the loader, one per CPU of the 8 CPUs")
	f(5000, 4, 8, true, 4, "4 loops: a saturation search must not be bounded by the loader, one per connection (-conns 4)")
	// A CPU set unknown (0) still gets a loop.
	f(0, 64, 0, false, 1, "1 loop: a closed loop takes every CPU it may")
}

func TestThousands(t *testing.T) {
	f := func(x float64, want string) {
		t.Helper()
		assert.Equal(t, want, thousands(x))
	}
	f(0, "0")
	f(999, "999")
	f(1000, "1,000")
	f(30_000, "30,000")
	f(1_234_567.4, "1,234,567")
	f(-5000, "-5,000")
}
