package compare

import (
	"fmt"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/loadgen/client"
)

// clientNamed is the client model the metastable plan names.
//
// Temporary: internal/loadgen/client is to name its models itself
// (client.Named, client.Names); this copy of them goes when it does, and
// clientNamed becomes client.Named.
func clientNamed(name string) (client.Model, error) {
	retry := client.Model{Timeout: time.Second, Retries: 2, RetryOn: client.RetryOn{Status503: true, Timeout: true}}
	backoff := retry
	backoff.Backoff, backoff.BackoffBase, backoff.BackoffCap, backoff.RetryAfter = client.BackoffExp, 10*time.Millisecond, time.Second, true
	budget, throttle := backoff, backoff
	budget.Budget = 0.2
	throttle.Throttle = 2
	models := map[string]client.Model{"none": {}, "retry": retry, "backoff": backoff, "budget": budget, "throttle": throttle}
	m, ok := models[name]
	if !ok {
		return m, fmt.Errorf("unknown client model %q; valid: %s", name, strings.Join(plan.MetaModels, ", "))
	}
	return m, nil
}
