package ioload

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	mib  = 1 << 20
	tick = 100 * time.Millisecond
)

// store is a stand-in for an LSM store's signals, moved by the test; its
// thresholds are Pebble's defaults (2 memtables of 64 MiB, compactions
// out of L0 from 4 sublevels, a stall at 12).
type store struct {
	s  Sample
	at int64
	c  *Controller
}

func newStore() *store {
	return &store{
		s: Sample{
			MemTableBytes: 64 * mib, MemTableSize: 64 * mib, MemTableStallBytes: 128 * mib,
			L0Sublevels: 1, L0CompactSublevels: 4, L0StallSublevels: 12,
		},
		at: int64(time.Hour),
		c:  New(),
	}
}

// tick advances the clock one tick and decides.
func (st *store) tick() Decision {
	st.at += int64(tick)
	return st.c.Tick(st.at, st.s)
}

// flush records a flush of bytes that worked for work.
func (st *store) flush(bytes int64, work time.Duration) {
	st.s.FlushedBytes += bytes
	st.s.FlushWork += work
	st.s.L0AddedBytes += uint64(bytes)
	st.s.L0Bytes += bytes
}

// TestHealthyStoreIsNotPaced: one memtable and a shallow L0 set no limit,
// from the first tick on.
func TestHealthyStoreIsNotPaced(t *testing.T) {
	st := newStore()
	for range 20 {
		d := st.tick()
		assert.False(t, d.Paced())
		assert.Equal(t, None, d.Cause)
	}
	st.flush(64*mib, 640*time.Millisecond)
	d := st.tick()
	assert.False(t, d.Paced(), "a flush measured, no memtable waiting")
	assert.InDelta(t, 0.5, d.Overload, 1e-9, "one memtable of the two the store stalls at")
}

// TestWaitingMemtableClosesAndReopensWrites: once a memtable waits for
// its flush, writes are held to the fraction (0.6 at first) of the flush
// rate measured (100 MiB/s); when it is flushed they are let go; before
// any flush was measured, only by the room left in the memtable being
// written (7/8 of it over 200 ms).
func TestWaitingMemtableClosesAndReopensWrites(t *testing.T) {
	st := newStore()
	st.tick()
	st.s.MemTableBytes = 128 * mib // a second memtable: the first waits
	d := st.tick()
	require.True(t, d.Paced(), "no flush measured yet")
	assert.InDelta(t, 56*mib/0.2, d.Rate, 1)

	st.flush(50*mib, 500*time.Millisecond) // 100 MiB/s while it worked
	d = st.tick()
	require.True(t, d.Paced())
	assert.Equal(t, MemTables, d.Cause)
	assert.InDelta(t, 0.6*100*mib, d.Rate, 1)
	assert.InDelta(t, 1.0, d.Overload, 1e-9)

	st.s.MemTableBytes = 64 * mib // flushed
	d = st.tick()
	assert.False(t, d.Paced(), "the memtable flushed: writes go at once again")
	assert.True(t, math.IsInf(d.Rate, 1))
}

// TestSpareMemtablesKeepOneAsACushion: where the store lets four
// memtables wait (MemTableStallBytes 256 MiB), writes are paced as soon
// as one waits, as at two; while its flush runs they may fill two
// memtables (less the margin), not the three before the stall: the
// fourth is a cushion for what the count of the fill misses.
func TestSpareMemtablesKeepOneAsACushion(t *testing.T) {
	st := newStore()
	st.s.MemTableStallBytes = 256 * mib
	st.tick()
	st.flush(50*mib, 500*time.Millisecond) // 100 MiB/s: a memtable in 640 ms
	require.False(t, st.tick().Paced())
	st.s.MemTableBytes = 128 * mib // the first waits for its flush
	d := st.tick()
	require.True(t, d.Paced())
	assert.Equal(t, MemTables, d.Cause)
	assert.InDelta(t, 0.6*100*mib, d.Rate, 1, "room to spare: the flush rate's fraction")
	assert.InDelta(t, 0.5, d.Overload, 1e-9, "two memtables of the four the store stalls at")

	for range 10 { // 110 MiB in 1 s: the flush is late
		st.s.WrittenBytes += 11 * mib
		d = st.tick()
	}
	assert.InDelta(t, 10*mib/0.2, d.Rate, 1, "120 MiB of room, 10 left, over 200 ms")
	st.s.WrittenBytes += 10 * mib
	assert.Equal(t, float64(minRate), st.tick().Rate, "no room left: a trickle")
}

// TestTheMemtableBeingWrittenNeverFills: while a memtable waits for a
// flush slower than measured, writes may fill the memtable being written
// up to 7/8 of it and no further, however long the flush takes; a new
// memtable waiting starts a new fill.
func TestTheMemtableBeingWrittenNeverFills(t *testing.T) {
	st := newStore()
	st.tick()
	st.flush(100*mib, time.Second) // 100 MiB/s: a memtable in 640 ms
	st.tick()
	st.s.MemTableBytes = 128 * mib
	st.s.WrittenBytes += 4 * mib // before it waited: not counted
	d := st.tick()
	assert.InDelta(t, 0.6*100*mib, d.Rate, 1, "room to spare: the flush rate's fraction")

	fill := func(bytes int) Decision {
		st.s.WrittenBytes += uint64(bytes)
		return st.tick()
	}
	for range 7 { // 42 MiB in 700 ms: the flush is late
		fill(6 * mib)
	}
	d = fill(4 * mib)
	assert.InDelta(t, 10*mib/0.2, d.Rate, 1, "10 MiB of room left over 200 ms")
	d = fill(10 * mib)
	assert.Equal(t, MemTables, d.Cause)
	assert.Equal(t, float64(minRate), d.Rate, "no room left: a trickle")

	st.s.Flushes++ // one flushed, the full one waits now
	d = st.tick()
	assert.InDelta(t, st.c.Fraction()*100*mib, d.Rate, 1, "a new memtable: room again")

	st.s.MemTableBytes = 64 * mib
	assert.False(t, fill(mib).Paced(), "nothing waits")
}

// TestStallsLowerTheFlushFractionQuietRaisesIt: each stall while paced
// takes 0.1 off the fraction (at most 3 at once), down to 0.4; each
// second paced without one gives 0.025 back, up to 1.
func TestStallsLowerTheFlushFractionQuietRaisesIt(t *testing.T) {
	st := newStore()
	st.tick()
	st.flush(100*mib, time.Second)
	st.s.MemTableBytes = 128 * mib
	assert.InDelta(t, 0.6*100*mib, st.tick().Rate, 1)

	st.s.Stalls++
	assert.InDelta(t, 0.5*100*mib, st.tick().Rate, 1)
	st.s.Stalls += 10 // counts as 3: 0.2, but not below 0.4
	assert.InDelta(t, 0.4*100*mib, st.tick().Rate, 1)
	st.s.Stalls++
	assert.InDelta(t, 0.4*100*mib, st.tick().Rate, 1, "not below the floor")

	for range 10 { // one second paced, no stall
		st.tick()
	}
	assert.InDelta(t, 0.425, st.c.Fraction(), 1e-9)
	for range 400 {
		st.tick()
	}
	assert.InDelta(t, 1.0, st.c.Fraction(), 1e-9, "not above the flush rate")
}

// TestDeepL0HoldsWritesNearWhatLeavesIt: with 20 MiB/s leaving L0 over
// the last 5 s, writes get twice that at the compaction point (4
// sublevels), once it at 8 (halfway to the stall), half at 10, a quarter
// from 11; under 4 they are free. Before anything has left L0, half the
// flush rate stands in for it.
func TestDeepL0HoldsWritesNearWhatLeavesIt(t *testing.T) {
	st := newStore()
	st.tick()
	st.flush(64*mib, 640*time.Millisecond) // 100 MiB/s, into L0
	st.s.L0Sublevels = 4
	d := st.tick()
	require.True(t, d.Paced())
	assert.Equal(t, L0, d.Cause)
	assert.InDelta(t, 2*50*mib, d.Rate, 1, "nothing has left L0: half the flush rate, twice it")

	for range 50 { // 5 s, 2 MiB out of L0 each 100 ms
		st.s.L0Bytes -= 2 * mib
		st.tick()
	}
	f := func(sublevels int, share float64) {
		t.Helper()
		st.s.L0Bytes -= 2 * mib
		st.s.L0Sublevels = sublevels
		d := st.tick()
		if share == 0 {
			assert.False(t, d.Paced(), "%d sublevels", sublevels)
			return
		}
		assert.Equal(t, L0, d.Cause)
		assert.InDelta(t, share*20*mib, d.Rate, 0.001*mib, "%d sublevels", sublevels)
	}
	f(4, 2)
	f(6, 1.5)
	f(8, 1)
	f(10, 0.5)
	f(11, 0.25)
	f(13, 0.25)
	f(3, 0)
	assert.InDelta(t, 0.75, st.s.overloadAt(9), 1e-9, "9 of 12 sublevels")
}

// TestL0RateCountsOnlyWhileCompactionsAreDue: what compactions move out
// of L0 is measured over the spans in which L0 was at or past the
// compaction point. Bytes that left a shallow L0, and the quiet time
// around them, do not count: when a flood brings L0 to the compaction
// point after a quiet spell, half the flush rate stands in until a
// compaction out of it has ended; 5 s after the last span measured it
// stands in again.
func TestL0RateCountsOnlyWhileCompactionsAreDue(t *testing.T) {
	st := newStore()
	st.tick()
	st.flush(64*mib, 640*time.Millisecond) // 100 MiB/s, into L0
	st.s.L0Sublevels = 2
	for i := range 50 { // 5 s below the compaction point
		if i == 25 {
			st.s.L0Bytes -= 20 * mib // Pebble compacted some of L0 all the same
		}
		require.False(t, st.tick().Paced())
	}
	st.s.L0Sublevels = 4
	d := st.tick()
	require.Equal(t, L0, d.Cause)
	assert.InDelta(t, 2*50*mib, d.Rate, 1, "the quiet spell (20 MiB in 5 s) is not what compactions move")
	for range 10 { // 1 s due, a compaction running: nothing has left yet
		d = st.tick()
	}
	assert.InDelta(t, 2*50*mib, d.Rate, 1, "nothing has left L0 since it was due")

	st.s.L0Bytes -= 33 * mib // the compaction ends: 33 MiB over 1.1 s due
	d = st.tick()
	assert.InDelta(t, 2*30*mib, d.Rate, 0.001*mib)

	st.s.L0Sublevels = 3
	for range 60 { // 6 s below the compaction point again
		require.False(t, st.tick().Paced())
	}
	st.s.L0Sublevels = 4
	d = st.tick()
	assert.InDelta(t, 2*50*mib, d.Rate, 1, "the last compaction measured is over 5 s old")
}

// TestTheTighterLimitWins: a waiting memtable and a deep L0 at once give
// the lower of the two limits, named by its cause.
func TestTheTighterLimitWins(t *testing.T) {
	st := newStore()
	st.tick()
	st.flush(100*mib, time.Second) // flush rate 100 MiB/s
	st.s.MemTableBytes = 128 * mib // memtables: 60 MiB/s
	st.s.L0Sublevels = 8           // L0: nothing left it; 50 MiB/s × 1
	d := st.tick()
	assert.Equal(t, L0, d.Cause)
	assert.InDelta(t, 50*mib, d.Rate, 1)
	st.s.L0Sublevels = 4 // L0: 50 × 2 = 100 MiB/s
	d = st.tick()
	assert.Equal(t, MemTables, d.Cause)
	assert.InDelta(t, 60*mib, d.Rate, 1)
}

// TestLimitNeverBelowATrickle: whatever was measured, a limit lets at
// least minRate through.
func TestLimitNeverBelowATrickle(t *testing.T) {
	st := newStore()
	st.tick()
	st.flush(1, time.Second) // a flush of one byte a second
	st.s.MemTableBytes = 128 * mib
	assert.Equal(t, float64(minRate), st.tick().Rate)
}

func TestL0Share(t *testing.T) {
	f := func(n int, want float64) {
		t.Helper()
		assert.InDelta(t, want, l0Share(n, 4, 12), 1e-9, "%d sublevels", n)
	}
	f(2, 2)
	f(4, 2)
	f(5, 1.75)
	f(6, 1.5)
	f(7, 1.25)
	f(8, 1)
	f(9, 0.75)
	f(10, 0.5)
	f(11, 0.25)
	f(40, 0.25)
}

// overloadAt is s's overload with n sublevels.
func (s Sample) overloadAt(n int) float64 {
	s.L0Sublevels = n
	return overload(s)
}

// TestSmallFlushesDoNotSetTheFlushRate: the small memtables a store
// writes first flush faster per byte than full ones: while only they
// were measured, a waiting memtable gets half their rate's share; once a
// full-sized flush (three quarters of a memtable or more) is measured,
// its rate replaces theirs and later small ones leave it be.
func TestSmallFlushesDoNotSetTheFlushRate(t *testing.T) {
	st := newStore()
	st.tick()
	st.flush(4*mib, 10*time.Millisecond) // 400 MiB/s
	st.tick()
	assert.InDelta(t, 400*mib, st.c.FlushRate(), 1)
	st.s.MemTableBytes = 128 * mib
	assert.InDelta(t, 0.6*400*mib/2, st.tick().Rate, 1, "half of what small flushes showed")
	st.s.MemTableBytes = 64 * mib
	st.flush(64*mib, 640*time.Millisecond) // 100 MiB/s, full-sized
	st.tick()
	assert.InDelta(t, 100*mib, st.c.FlushRate(), 1, "the first full flush replaces the small ones")
	st.flush(8*mib, 20*time.Millisecond)
	st.tick()
	assert.InDelta(t, 100*mib, st.c.FlushRate(), 1, "a small flush no longer counts")
	st.flush(64*mib, 320*time.Millisecond) // 200 MiB/s
	st.tick()
	assert.InDelta(t, 150*mib, st.c.FlushRate(), 1, "full ones are smoothed in")
}
