package loadgen

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseMix(t *testing.T) {
	f := func(in string, want float64) {
		t.Helper()
		got, err := ParseMix(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	f("get", 1)
	f("put", 0)
	f("mixed:0.9", 0.9)
	f("mixed:0", 0)
	for _, bad := range []string{"", "post", "mixed:", "mixed:1.5", "mixed:-0.1", "mixed:x"} {
		_, err := ParseMix(bad)
		assert.Error(t, err, bad)
	}
}

func TestPickerDrawsTheWorkload(t *testing.T) {
	count := func(w Workload) (gets int, keys map[uint64]int) {
		p := newPicker(w, 7)
		keys = map[uint64]int{}
		for i := uint64(0); i < 20_000; i++ {
			op, k := p.next(i)
			if op == OpGet {
				gets++
			}
			require.GreaterOrEqual(t, k, uint64(1))
			require.LessOrEqual(t, k, w.Keys)
			keys[k]++
		}
		return gets, keys
	}
	w := Workload{ReadShare: 0.9, Keys: 100, Dist: DistUniform, ZipfS: 1.1, ValueSize: 10}
	gets, keys := count(w)
	assert.InDelta(t, 18_000, gets, 600, "mixed:0.9 sends ~90% GETs")
	assert.Len(t, keys, 100, "uniform reaches every id")

	w.Dist, w.ReadShare = DistZipf, 0
	gets, keys = count(w)
	assert.Zero(t, gets)
	for k := uint64(2); k <= 100; k++ {
		assert.GreaterOrEqual(t, keys[1], keys[k], "zipf: id 1 is the hottest")
	}

	a, b := newPicker(w, 3), newPicker(w, 3)
	for i := uint64(0); i < 100; i++ {
		_, ka := a.next(i)
		_, kb := b.next(i)
		require.Equal(t, ka, kb, "same seed, same keys")
	}

	seq := newPicker(Workload{Sequential: true, First: 500, Keys: 1}, 1)
	op, k := seq.next(10)
	assert.Equal(t, OpPut, op)
	assert.Equal(t, uint64(510), k)
}

func TestWorkloadValidate(t *testing.T) {
	ok := Workload{ReadShare: 1, Keys: 1, Dist: DistUniform, ZipfS: 1.1}
	require.NoError(t, ok.Validate())
	f := func(mod func(*Workload), want string) {
		t.Helper()
		w := ok
		mod(&w)
		err := w.Validate()
		require.Error(t, err)
		assert.Contains(t, err.Error(), want)
	}
	f(func(w *Workload) { w.Keys = 0 }, "-keys")
	f(func(w *Workload) { w.ValueSize = -1 }, "-value-size")
	f(func(w *Workload) { w.Dist = "pareto" }, "-dist")
	f(func(w *Workload) { w.Dist, w.ZipfS = DistZipf, 1 }, "-zipf-s")
}
