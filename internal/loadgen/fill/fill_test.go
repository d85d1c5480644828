package fill

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/loadgentest"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
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

func loadConfig(url string) config.Config {
	c := config.Default()
	c.Target = url
	c.Conns = 4
	c.Timeout = 5 * time.Second
	c.Progress = 0
	c.Workload.ValueSize = 100
	return c
}

func TestFillStoresEveryIdWithItsDeterministicValue(t *testing.T) {
	m := &memStore{vals: map[uint64][]byte{}}
	fr, err := Run(context.Background(), loadConfig(loadgentest.ServeHandler(t, m.handle)), Range{1, 500}, nil)
	require.NoError(t, err)
	assert.True(t, fr.Complete)
	assert.Equal(t, uint64(501), fr.ResumeFrom)
	assert.Equal(t, int64(500), fr.Sent)
	require.Len(t, m.vals, 500)
	for id := uint64(1); id <= 500; id++ {
		require.Equal(t, workload.Value(id, 100), m.vals[id], "id %d", id)
	}
}

// An interrupted fill says where to resume; resuming from there completes
// the store and every id below the resume point was already stored.
func TestFillResumesByKeyRange(t *testing.T) {
	m := &memStore{vals: map[uint64][]byte{}, failFrom: 300}
	url := loadgentest.ServeHandler(t, m.handle)
	fr, err := Run(context.Background(), loadConfig(url), Range{1, 600}, nil)
	require.NoError(t, err)
	assert.False(t, fr.Complete)
	assert.LessOrEqual(t, fr.ResumeFrom, uint64(300))
	assert.Positive(t, fr.ErrorCount)
	m.mu.Lock()
	for id := uint64(1); id < fr.ResumeFrom; id++ {
		assert.Equal(t, workload.Value(id, 100), m.vals[id], "id %d is below the resume point", id)
	}
	m.failFrom = 0
	m.mu.Unlock()

	fr2, err := Run(context.Background(), loadConfig(url), Range{fr.ResumeFrom, 600}, nil)
	require.NoError(t, err)
	assert.True(t, fr2.Complete)
	assert.Len(t, m.vals, 600)
	for id := uint64(1); id <= 600; id++ {
		assert.Equal(t, workload.Value(id, 100), m.vals[id], "id %d", id)
	}
}

// Fill's own settings win over whatever the load config says: a rate, a
// duration or a mix given to it does not make it an open-model run.
func TestFillIgnoresTheLoadsRateAndMix(t *testing.T) {
	m := &memStore{vals: map[uint64][]byte{}}
	c := loadConfig(loadgentest.ServeHandler(t, m.handle))
	c.Rate, c.Duration, c.Workload.Mix = 5, time.Millisecond, workload.Delete
	fr, err := Run(context.Background(), c, Range{1, 50}, nil)
	require.NoError(t, err)
	assert.True(t, fr.Complete)
	assert.Len(t, m.vals, 50)
}

func TestFillRejectsAnEmptyRange(t *testing.T) {
	f := func(ids Range, want string) {
		t.Helper()
		err := Validate(loadConfig("http://127.0.0.1:1"), ids)
		require.Error(t, err)
		assert.Contains(t, err.Error(), want)
		_, err = Run(context.Background(), loadConfig("http://127.0.0.1:1"), ids, nil)
		require.Error(t, err)
	}
	f(Range{10, 5}, "-from")
	f(Range{0, 5}, "-from")
	require.NoError(t, Validate(loadConfig("http://127.0.0.1:1"), Range{1, 1}))
}
