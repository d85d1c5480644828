//go:build linux && !race

package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The event loop's path of one request allocates nothing: take the idle
// conn, prepare and write the request, wait, read and parse the response,
// record it, put the conn back.
func TestEventLoopRequestAllocatesNothing(t *testing.T) {
	e, l, c := connectedLoop(t)
	l.idle.push(c)
	var seq uint64
	allocs := testing.AllocsPerRun(1000, func() {
		l.send(l.idle.pop(), attempt{at: e.sched.At(seq), seq: e.sched.Seq(seq)})
		seq++
		for c.ev.busy {
			for i := range l.wait(l.epfd, time.Second) {
				ev := &l.events[i]
				l.onEvent(e.conns[ev.Fd], ev.Events, e.now())
			}
		}
	})
	require.Zero(t, allocs, "allocations per request")
	require.Zero(t, c.rec.ErrCount.Load(), "every request was answered")
	require.Equal(t, int64(1001), c.carried, "AllocsPerRun's warm-up and 1000 runs")
	require.Same(t, c, l.idle.head, "the conn is idle again")
}
