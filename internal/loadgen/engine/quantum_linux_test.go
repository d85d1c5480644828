//go:build linux

package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/valyala/fasthttp"

	"github.com/kvpool/kvpool/internal/loadgen/bareserver"
	"github.com/kvpool/kvpool/internal/loadgen/loadgentest"
	"github.com/kvpool/kvpool/internal/loadgen/schedule"
)

// With -quantum 0 the event loop starts from the quantum its rate takes
// (a wake-up per request at 5,000 req/s) and sizes it again from the
// answers: a server that takes at least 6 ms per answer grows it to a
// tenth of that, which the Result reports: 500 µs or more (2.5 requests a
// quantum) leaves room for an answer's end read from the kernel's receive
// time, a wall clock that NTP may slew against the monotonic clock the
// send time is read from (a 5 ms answer once read 4.96 ms).
func TestAutoQuantumFollowsTheAnswers(t *testing.T) {
	slow := loadgentest.ServeHandler(t, func(ctx *fasthttp.RequestCtx) {
		time.Sleep(6 * time.Millisecond)
		bareserver.Handler(ctx)
	})
	cfg := testConfig(slow, 5000, 200*time.Millisecond)
	cfg.Conns, cfg.MaxConns, cfg.Loops = 64, 64, 1
	res := run(t, cfg)
	assert.GreaterOrEqual(t, res.Sent, int64(requantumEvery), "enough answers to size it again")
	assert.GreaterOrEqual(t, res.Quantum, 500*time.Microsecond)
	assert.LessOrEqual(t, res.Quantum, schedule.MaxQuantum)

	fast := loadgentest.ServeHandler(t, bareserver.Handler)
	res = run(t, testConfig(fast, 1000, 100*time.Millisecond))
	assert.Equal(t, schedule.PreciseQuantum, res.Quantum, "1,000 req/s: a wake-up per request")

	cfg = testConfig(fast, 1000, 100*time.Millisecond)
	cfg.Quantum = 300 * time.Microsecond
	res = run(t, cfg)
	assert.Equal(t, 300*time.Microsecond, res.Quantum, "-quantum fixes it")
}
