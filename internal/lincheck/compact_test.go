package lincheck

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randomHistory is one key's history of n operations on a coarse clock (so
// that many times tie): mostly a Set, then PUTs of values of their own, DELETEs
// (some of either in doubt) and GETs, whose answers come from a register
// that takes each operation at a random point of its interval. With
// probability bad the register loses one write (answered all the same),
// and with probability bad one GET's answer is then changed to another
// value, or to one nobody wrote: many histories are illegal, some for a
// write no read returned.
func randomHistory(r *rand.Rand, n int, bad float64) []porcupine.Operation {
	type timed struct {
		op    porcupine.Operation
		point float64
	}
	set := Absent
	if r.IntN(2) == 0 {
		set = 1000
	}
	var ops []timed
	if r.IntN(4) > 0 { // else the model's initial state, Absent
		ops = append(ops, timed{op(0, Set, "k", set, -1, -1), -1})
	}
	values := []int64{set}
	for i := range n {
		call := int64(r.IntN(20))
		ret := call + int64(r.IntN(8))
		var o porcupine.Operation
		switch k := r.IntN(10); {
		case k < 4:
			o = op(i+1, Put, "k", int64(i+1), call, ret)
			values = append(values, int64(i+1))
		case k < 5:
			o = op(i+1, Delete, "k", 0, call, ret)
		default:
			o = op(i+1, Get, "k", 0, call, ret)
		}
		point := float64(call) + r.Float64()*float64(ret-call)
		if o.Input.(Input).Kind != Get && r.IntN(8) == 0 {
			o.Return = never
			point = float64(call) + r.Float64()*40 // applied at any time, or after everything
		}
		ops = append(ops, timed{o, point})
	}
	byPoint := slices.Clone(ops)
	slices.SortStableFunc(byPoint, func(a, b timed) int {
		switch {
		case a.point < b.point:
			return -1
		case a.point > b.point:
			return 1
		}
		return 0
	})
	lost := -1
	if r.Float64() < bad {
		lost = 1 + r.IntN(n)
	}
	state := Absent
	answers := map[int]int64{} // client id -> value read
	for _, t := range byPoint {
		in := t.op.Input.(Input)
		if t.op.ClientId == lost {
			continue
		}
		switch in.Kind {
		case Put, Set:
			state = in.Value
		case Delete:
			state = Absent
		case Get:
			answers[t.op.ClientId] = state
		}
	}
	out := make([]porcupine.Operation, len(ops))
	for i, t := range ops {
		if v, ok := answers[t.op.ClientId]; ok {
			t.op.Output = Output{Value: v}
		}
		out[i] = t.op
	}
	if r.Float64() < bad {
		var gets []int
		for i, o := range out {
			if o.Input.(Input).Kind == Get {
				gets = append(gets, i)
			}
		}
		if len(gets) > 0 {
			i := gets[r.IntN(len(gets))]
			v := values[r.IntN(len(values))]
			if r.IntN(6) == 0 {
				v = 999 // nobody wrote it
			}
			out[i].Output = Output{Value: v}
		}
	}
	return out
}

// TestCompactKeepsTheVerdict: compact never changes porcupine's verdict,
// over many random small histories, legal and illegal, with ties, writes
// in doubt, DELETEs and reads of absent keys.
func TestCompactKeepsTheVerdict(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var legal, illegal, shrunk int
	for range 20000 {
		h := randomHistory(r, 2+r.IntN(12), 0.4)
		want := porcupine.CheckOperations(Model, h)
		c := compact(h)
		if got := porcupine.CheckOperations(Model, c); got != want {
			require.Failf(t, "compact changed the verdict", "full history linearizable: %v, compacted: %v\nfull:      %v\ncompacted: %v", want, got, h, c)
		}
		if want {
			legal++
		} else {
			illegal++
		}
		if len(c) < len(h) {
			shrunk++
		}
	}
	t.Logf("%d legal, %d illegal histories; %d shrunk", legal, illegal, shrunk)
	assert.Greater(t, legal, 4000)
	assert.Greater(t, illegal, 4000)
	assert.Greater(t, shrunk, 4000)
}
