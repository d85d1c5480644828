package cpuset

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestUseOf: a share is the CPU time over the span × the CPUs, unknown
// where the span or the CPUs are not above 0 or a counter went backwards;
// the CPUs stay known either way.
func TestUseOf(t *testing.T) {
	f := func(cpu, span time.Duration, cpus int, want Use) {
		t.Helper()
		assert.Equal(t, want, UseOf(cpu, span, cpus))
	}
	f(3*time.Second, 2*time.Second, 2, Use{Share: 0.75, CPUs: 2})
	f(0, time.Second, 4, Use{Share: 0, CPUs: 4})
	f(time.Second, 0, 4, Use{Share: -1, CPUs: 4})
	f(time.Second, time.Second, 0, Use{Share: -1})
	f(-time.Second, time.Second, 1, Use{Share: -1, CPUs: 1})
}

// TestUseOutOfCPU: a side is out of CPU from Busy up, never where its
// share is unknown.
func TestUseOutOfCPU(t *testing.T) {
	f := func(share float64, want bool) {
		t.Helper()
		assert.Equal(t, want, Use{Share: share, CPUs: 2}.OutOfCPU(), "share %v", share)
	}
	f(Busy, true)
	f(1.02, true)
	f(Busy-0.001, false)
	f(0, false)
	f(-1, false)
	assert.False(t, Unknown.Known())
	assert.True(t, Use{}.Known(), "0 % is a share read")
}

func TestUseText(t *testing.T) {
	assert.Equal(t, "the loader at 42% of its 2 CPUs", Use{Share: 0.42, CPUs: 2}.Text("the loader"))
	assert.Equal(t, "the server at 100% of its 1 CPU", Use{Share: 1, CPUs: 1}.Text("the server"))
	assert.Equal(t, "the server at 5% of its ? CPUs", Use{Share: 0.05}.Text("the server"))
	assert.Equal(t, "the loader's CPU unknown", Unknown.Text("the loader"))
}
