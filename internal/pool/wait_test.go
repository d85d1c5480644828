package pool

import (
	"testing"
	"time"

	"github.com/kvpool/kvpool/internal/mono/monotest"
)

// hangGuard bounds every wait for an event in this package's tests. It is
// never what a test asserts: a test that reaches it has already failed
// (the event it waits for never came), and it then fails with a message
// instead of hanging until the test binary's timeout.
const hangGuard = 30 * time.Second

// await waits for ch to be closed, or fails the test after hangGuard.
func await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(hangGuard):
		t.Fatalf("still waiting after %v for %s", hangGuard, what)
	}
}

// newFakeClock is the clock the pool tests put in Config.clock: it moves
// only when the test advances it.
func newFakeClock() *monotest.Clock { return monotest.New() }
