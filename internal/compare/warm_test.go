package compare

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/harness"
)

// TestWarmReadsTheStoreAndChangesNothing: the warm-up is GETs over the
// store's ids, whatever the step's workload, and none without a WarmUp.
func TestWarmReadsTheStoreAndChangesNothing(t *testing.T) {
	var gets, others, outOfRange atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet || req.URL.Path != "/v0/entity" {
			others.Add(1)
		} else {
			gets.Add(1)
		}
		if id, err := strconv.ParseUint(req.URL.Query().Get("id"), 10, 64); err != nil || id < 1 || id > 1000 {
			outOfRange.Add(1)
		}
		io.WriteString(w, "v")
	}))
	defer ts.Close()
	o := plan.DefaultOptions()
	o.Keys, o.ValueSize, o.Workload = 1000, 100, "put"
	r := (&runner{o: o, log: io.Discard}).step(nil)
	srv := &instance{Server: &harness.Server{URL: ts.URL}, wl: "put", v: &result.VariantResult{Name: "direct"}}

	r.warm(context.Background(), srv, "saturate-1")
	assert.Zero(t, gets.Load()+others.Load(), "no WarmUp, no warm-up")

	r.t.WarmUp = 200 * time.Millisecond
	r.warm(context.Background(), srv, "saturate-1")
	require.Positive(t, gets.Load(), "the warm-up reads")
	assert.Zero(t, others.Load(), "and only reads, under a PUT workload too")
	assert.Zero(t, outOfRange.Load(), "of the store's ids")
	assert.Empty(t, r.out.notes)
}
