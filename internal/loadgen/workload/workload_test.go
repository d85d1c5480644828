package workload

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/api"
)

func TestParseMix(t *testing.T) {
	f := func(in string, want Mix) {
		t.Helper()
		got, err := ParseMix(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
		again, err := ParseMix(got.String())
		require.NoError(t, err, "%q spells %q", in, got.String())
		assert.Equal(t, got, again, "String parses back: %q", got.String())
	}
	f("get", Get)
	f("put", Put)
	f("delete", Delete)
	get := 0.9
	f("mixed:0.9", Mix{Get: get, Put: 1 - get}) // as ParseMix computes it
	f("mixed:0", Put)
	f("get=0.8,put=0.15,delete=0.05", Mix{Get: 0.8, Put: 0.15, Delete: 0.05})
	f("delete=0.5,get=0.5", Mix{Get: 0.5, Delete: 0.5})
	f("put=1", Put)
	bad := func(in, want string) {
		t.Helper()
		_, err := ParseMix(in)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
	}
	bad("", "not a known workload")
	bad("post", "not a known workload")
	bad("mixed:", "read share")
	bad("mixed:1.5", "read share")
	bad("mixed:-0.1", "read share")
	bad("get=0.8,put=0.1", "summing to 0.9")
	bad("get=0.5,post=0.5", `"post"`)
	bad("get=0.5,get=0.5", "twice")
	bad("get=x,put=1", `"get"`)
	bad("get=-1,put=2", `"get"`)
}

func TestPickerDrawsTheMix(t *testing.T) {
	count := func(w Workload) (ops [api.NumMethods]int, keys map[uint64]int) {
		p := NewPicker(w, 7)
		keys = map[uint64]int{}
		for i := uint64(0); i < 20_000; i++ {
			op, k := p.Next(i)
			ops[op]++
			require.GreaterOrEqual(t, k, uint64(1))
			require.LessOrEqual(t, k, w.Keys)
			keys[k]++
		}
		return ops, keys
	}
	w := Workload{Mix: Mix{Get: 0.8, Put: 0.15, Delete: 0.05}, Keys: 100, Dist: DistUniform, ZipfS: 1.1, ValueSize: 10}
	ops, keys := count(w)
	assert.InDelta(t, 16_000, ops[api.Get], 600, "80%% GETs")
	assert.InDelta(t, 3_000, ops[api.Put], 400, "15%% PUTs")
	assert.InDelta(t, 1_000, ops[api.Delete], 250, "5%% DELETEs")
	assert.Len(t, keys, 100, "uniform reaches every id")

	w.Mix = Delete
	ops, _ = count(w)
	assert.Equal(t, 20_000, ops[api.Delete])

	w.Dist, w.Mix = DistZipf, Put
	ops, keys = count(w)
	assert.Equal(t, 20_000, ops[api.Put])
	for k := uint64(2); k <= 100; k++ {
		assert.GreaterOrEqual(t, keys[1], keys[k], "zipf: id 1 is the hottest")
	}

	a, b := NewPicker(w, 3), NewPicker(w, 3)
	for i := uint64(0); i < 100; i++ {
		_, ka := a.Next(i)
		_, kb := b.Next(i)
		require.Equal(t, ka, kb, "same seed, same keys")
	}

	seq := NewPicker(Workload{Sequential: true, First: 500, Keys: 1}, 1)
	op, k := seq.Next(10)
	assert.Equal(t, api.Put, op)
	assert.Equal(t, uint64(510), k)
}

func TestWorkloadValidate(t *testing.T) {
	ok := Workload{Mix: Get, Keys: 1, Dist: DistUniform, ZipfS: 1.1}
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
	f(func(w *Workload) { w.Mix = Mix{Get: 0.5} }, "-workload")
}

func TestValueIsDeterministicAndSized(t *testing.T) {
	f := func(key uint64, size int, prefix string) {
		t.Helper()
		v := Value(key, size)
		assert.Len(t, v, size)
		assert.True(t, bytes.HasPrefix([]byte(prefix), v) || bytes.HasPrefix(v, []byte(prefix)), "%q", v)
		assert.Equal(t, v, Value(key, size), "same key, same value")
		assert.Equal(t, v, AppendValue([]byte("xyz"), key, size)[3:], "AppendValue appends the same bytes")
	}
	f(42, 500, "42:")
	f(42, 2, "42")
	f(1234567, 0, "")
	f(7, 200_000, "7:") // larger than the pattern: wraps around
	assert.NotEqual(t, Value(1, 100)[2:], Value(2, 100)[2:], "different keys read different parts of the pattern")
	assert.Equal(t, "1:", string(Value(1, 100)[:2]))
}
