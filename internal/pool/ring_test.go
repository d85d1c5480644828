package pool

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRing: a deque across wrap-around and growth, both ends, slots cleared.
func TestRing(t *testing.T) {
	r := newRing(3)
	require.Len(t, r.buf, 4)
	at := func(i int64) item { return item{task: &probe{}, enqueued: i} }
	var next, oldest int64 // items oldest..next-1 are in r
	for round := range 50 {
		for range round%7 + 1 {
			r.pushBack(at(next))
			next++
		}
		for range round%5 + 1 {
			if r.len() == 0 {
				break
			}
			assert.Equal(t, oldest, r.front().enqueued)
			assert.Equal(t, oldest, r.popFront().enqueued)
			oldest++
		}
		require.Equal(t, int(next-oldest), r.len())
	}
	for r.len() > 0 {
		next--
		assert.Equal(t, next, r.popBack().enqueued)
	}
	assert.Equal(t, oldest, next)
	for _, it := range r.buf {
		assert.Nil(t, it.task, "a popped slot still holds its task")
	}
}
