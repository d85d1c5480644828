package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/pool"
)

// TestFailsafeRefusalIs503: failsafe-go's limiter at a limit of 1
// (-workers 1) queues up to 3 requests behind the one holding its permit
// and refuses the next at once: kvserver answers that refusal as any
// pool's, 503 with Retry-After 1 and X-Shed-Reason full, the store
// untouched; a marked retry (X-Envoy-Attempt-Count 2) is answered the
// same way. Once the permit is free, the queued requests are served.
func TestFailsafeRefusalIs503(t *testing.T) {
	for _, name := range []string{pool.Failsafe, pool.FailsafePriority} {
		t.Run(name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Pool, cfg.Pcfg.Workers = name, 1
			s, st, hold := holding(t, cfg, "refused")
			var queued []<-chan served
			for i := range 3 {
				queued = append(queued, serveAsync(t, s, fmt.Sprintf("GET /v0/entity?id=q%d HTTP/1.1\r\nHost: x\r\n\r\n", i)))
				require.Eventually(t, func() bool { return s.PoolStats().Queued == i+1 }, hangGuard, 50*time.Microsecond)
			}
			for _, request := range []string{
				"GET /v0/entity?id=refused HTTP/1.1\r\nHost: x\r\n\r\n",
				"GET /v0/entity?id=refused HTTP/1.1\r\nHost: x\r\n" + api.HeaderAttemptCount + ": 2\r\n\r\n",
			} {
				r := receive(t, serveAsync(t, s, request))
				assert.Equal(t, 503, r.code)
				assert.Equal(t, "1", r.retryAfter)
				assert.Equal(t, "full", r.reason)
			}
			close(st.release)
			assert.Equal(t, 200, receive(t, hold).code)
			for _, q := range queued {
				assert.Equal(t, 200, receive(t, q).code)
			}
			assert.EqualValues(t, 2, s.PoolStats().Rejected[pool.ReasonFull])
			hasMetric(t, s, `kvserver_pool_rejected_total{pool="`+name+`",reason="full"} 2`)
		})
	}
}
