package loadgen

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/kvpool/kvpool/internal/latency"
)

// memStore is a fake kvserver that keeps PUT bodies and can be told to
// fail PUTs of ids at or above failFrom with 500.
type memStore struct {
	mu       sync.Mutex
	vals     map[uint64][]byte
	failFrom uint64
}

func (m *memStore) handle(ctx *fasthttp.RequestCtx) {
	id := uint64(ctx.QueryArgs().GetUintOrZero("id"))
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failFrom > 0 && id >= m.failFrom {
		ctx.SetStatusCode(fasthttp.StatusInternalServerError)
		return
	}
	m.vals[id] = append([]byte(nil), ctx.PostBody()...)
	ctx.SetStatusCode(fasthttp.StatusCreated)
}

func fillConfig(url string, from, to uint64) Config {
	c := testConfig(url, 0, 0)
	c.Workload.ValueSize = 100
	c.Fill = FillConfig{From: from, To: to}
	return c
}

func TestFillStoresEveryIdWithItsDeterministicValue(t *testing.T) {
	m := &memStore{vals: map[uint64][]byte{}}
	url := serve(t, m.handle)
	fr, err := Fill(context.Background(), fillConfig(url, 1, 500), nil)
	require.NoError(t, err)
	assert.True(t, fr.Complete)
	assert.Equal(t, uint64(501), fr.ResumeFrom)
	assert.Equal(t, int64(500), fr.Sent)
	require.Len(t, m.vals, 500)
	for id := uint64(1); id <= 500; id++ {
		require.Equal(t, Value(id, 100), m.vals[id], "id %d", id)
	}
}

// An interrupted fill says where to resume; resuming from there completes
// the store and every id below the resume point was already stored.
func TestFillResumesByKeyRange(t *testing.T) {
	m := &memStore{vals: map[uint64][]byte{}, failFrom: 300}
	url := serve(t, m.handle)
	fr, err := Fill(context.Background(), fillConfig(url, 1, 600), nil)
	require.NoError(t, err)
	assert.False(t, fr.Complete)
	assert.LessOrEqual(t, fr.ResumeFrom, uint64(300))
	assert.Positive(t, fr.ErrorCount)
	m.mu.Lock()
	for id := uint64(1); id < fr.ResumeFrom; id++ {
		assert.Equal(t, Value(id, 100), m.vals[id], "id %d is below the resume point", id)
	}
	m.failFrom = 0
	m.mu.Unlock()

	fr2, err := Fill(context.Background(), fillConfig(url, fr.ResumeFrom, 600), nil)
	require.NoError(t, err)
	assert.True(t, fr2.Complete)
	assert.Len(t, m.vals, 600)
	for id := uint64(1); id <= 600; id++ {
		assert.Equal(t, Value(id, 100), m.vals[id], "id %d", id)
	}
}

func TestFillRejectsAnEmptyRange(t *testing.T) {
	_, err := Fill(context.Background(), fillConfig("http://127.0.0.1:1", 10, 5), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-from")
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

func latencyOf(d interface{ Microseconds() int64 }) *hdrhistogram.Histogram {
	h := latency.New()
	_ = h.RecordValues(d.Microseconds(), 100)
	return h
}
