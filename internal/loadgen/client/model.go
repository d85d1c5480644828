// Package client models how a real HTTP client behaves when a server is
// slow or refuses: it gives up after a timeout, retries some failures
// (at once, or after an exponential backoff with full jitter, or when the
// server's Retry-After says), keeps its retries within a budget, and
// throttles itself when the server refuses much of what it asks. The
// load lab's open-model loader asks a Client, per attempt, whether to send
// and whether and when to retry; the package holds no connections and
// reads no clock: every decision takes the time from its caller, so tests
// drive it with a fake clock.
package client

import (
	"fmt"
	"strings"
	"time"
)

// Backoff kinds (-backoff).
const (
	BackoffNone = "none" // a retry is due at once
	BackoffExp  = "exp"  // exponential, capped, with full jitter
)

// Model is one client population's behaviour. The zero Model is the lab's
// classic client: it waits up to the run's -timeout and never retries.
type Model struct {
	// Timeout is how long the client waits for an attempt's answer
	// before it gives up on it (closing the connection, as an HTTP/1.1
	// client must) and counts a timeout; 0: the run's -timeout.
	Timeout time.Duration `json:"timeout_ns,omitempty"`
	// Retries is how many times a failed attempt is tried again (so at
	// most Retries+1 attempts per request).
	Retries int `json:"retries,omitempty"`
	// RetryOn is which failures are retried; empty with Retries > 0
	// means 503 and timeouts.
	RetryOn RetryOn `json:"retry_on,omitempty"`
	// Backoff is BackoffNone or BackoffExp ("" = none); BackoffBase and
	// BackoffCap bound the exponential one: attempt n (1 = the first
	// retry) waits a uniform time in [0, min(Cap, Base·2^(n-1))].
	// BackoffCap 0 is no cap: the bound doubles without limit (AWS's
	// full jitter caps it; a model that wants one says so).
	Backoff     string        `json:"backoff,omitempty"`
	BackoffBase time.Duration `json:"backoff_base_ns,omitempty"`
	BackoffCap  time.Duration `json:"backoff_cap_ns,omitempty"`
	// RetryAfter honours the server's Retry-After on a 503: the retry
	// waits at least that long.
	RetryAfter bool `json:"retry_after,omitempty"`
	// Budget, if > 0, caps retries at Budget × the first tries over a
	// sliding window (Finagle's RetryBudget, Envoy's retry budget); a
	// retry over it is not made (the request fails). 0: no budget.
	Budget float64 `json:"budget,omitempty"`
	// Throttle, if > 0, is K of Google SRE's client-side adaptive
	// throttling: an attempt is refused locally, never sent, with
	// probability max(0, (requests − K·accepts)/(requests + 1)) over a
	// sliding window. 0: no throttling.
	Throttle float64 `json:"throttle,omitempty"`
	// SendDeadline sends each attempt's deadline (its timeout) in the
	// X-Request-Timeout-Ms header, so that the server can drop work
	// whose client has gone.
	SendDeadline bool `json:"send_deadline,omitempty"`
	// MarkRetries sends each retry's attempt number (2 for the first
	// retry) in the X-Envoy-Attempt-Count header, as clients behind Envoy
	// or gRPC stacks do, so that the server can tell retries from first
	// tries. First tries carry nothing. Without retries it changes
	// nothing.
	MarkRetries bool `json:"mark_retries,omitempty"`
}

// RetryOn is a set of retryable outcomes.
type RetryOn struct {
	Status503 bool `json:"503,omitempty"`
	Timeout   bool `json:"timeout,omitempty"`
	// Error: transport errors (refused, reset) other than timeouts.
	Error bool `json:"error,omitempty"`
}

// IsZero reports whether no outcome is retried.
func (r RetryOn) IsZero() bool { return r == RetryOn{} }

// defaultRetryOn is what a model with retries and no RetryOn retries:
// what a server's overload looks like to a client.
var defaultRetryOn = RetryOn{Status503: true, Timeout: true}

// retryOn is what m retries: RetryOn, its default when empty, nothing
// without retries.
func (m *Model) retryOn() RetryOn {
	switch {
	case m.Retries <= 0:
		return RetryOn{}
	case m.RetryOn.IsZero():
		return defaultRetryOn
	}
	return m.RetryOn
}

// Words of -retry-on, in String's order.
const (
	retryOn503     = "503"
	retryOnTimeout = "timeout"
	retryOnError   = "error"
)

// String is r as -retry-on takes it ("503,timeout"; "" when empty).
func (r RetryOn) String() string {
	var words []string
	if r.Status503 {
		words = append(words, retryOn503)
	}
	if r.Timeout {
		words = append(words, retryOnTimeout)
	}
	if r.Error {
		words = append(words, retryOnError)
	}
	return strings.Join(words, ",")
}

// ParseRetryOn reads -retry-on: any of 503, timeout and error, comma
// separated ("" is the empty set, which a model with retries reads as
// 503,timeout).
func ParseRetryOn(s string) (RetryOn, error) {
	var r RetryOn
	if strings.TrimSpace(s) == "" {
		return r, nil
	}
	for _, w := range strings.Split(s, ",") {
		switch strings.ToLower(strings.TrimSpace(w)) {
		case retryOn503:
			r.Status503 = true
		case retryOnTimeout:
			r.Timeout = true
		case retryOnError:
			r.Error = true
		default:
			return RetryOn{}, fmt.Errorf("-retry-on %q: %q is not %s, %s or %s (comma-separated, such as %s,%s)",
				s, strings.TrimSpace(w), retryOn503, retryOnTimeout, retryOnError, retryOn503, retryOnTimeout)
		}
	}
	return r, nil
}

// Retrying reports whether the model ever retries.
func (m *Model) Retrying() bool { return m.Retries > 0 }

// MostAttempts is the most attempts m sends per first try when every
// attempt fails: 1 + Retries, its retries capped by its Budget where it
// has one. A storm's worst second asks the loader for about this many
// attempts per first try.
func (m *Model) MostAttempts() float64 {
	if m.Retries <= 0 {
		return 1
	}
	if m.Budget > 0 {
		return 1 + min(float64(m.Retries), m.Budget)
	}
	return 1 + float64(m.Retries)
}

// IsZero reports whether m is the classic client (no timeout of its own,
// no retries, no throttle, no deadline header). -backoff none spelled
// out is the same client, and so is -mark-retries without retries.
func (m *Model) IsZero() bool {
	c := *m
	if c.Backoff == BackoffNone {
		c.Backoff = ""
	}
	if c.Retries <= 0 {
		c.MarkRetries = false
	}
	return c == Model{}
}

// Validate reports the first setting that cannot work, naming its flag
// and the form it accepts.
func (m *Model) Validate() error {
	switch {
	case m.Timeout < 0:
		return fmt.Errorf("-client-timeout %v must be above 0 (a duration such as 1s)", m.Timeout)
	case m.Retries < 0:
		return fmt.Errorf("-retries %d must be 0 or more", m.Retries)
	case m.Backoff != "" && m.Backoff != BackoffNone && m.Backoff != BackoffExp:
		return fmt.Errorf("-backoff %q is not %s or %s", m.Backoff, BackoffNone, BackoffExp)
	case m.BackoffBase < 0 || m.BackoffCap < 0:
		return fmt.Errorf("-backoff-base and -backoff-cap must be durations of 0 or more (such as 10ms and 1s)")
	case m.Backoff == BackoffExp && m.BackoffBase <= 0:
		return fmt.Errorf("-backoff %s needs -backoff-base above 0 (such as 10ms)", BackoffExp)
	case m.Backoff == BackoffExp && m.BackoffCap > 0 && m.BackoffBase > m.BackoffCap:
		return fmt.Errorf("-backoff-base %v is above -backoff-cap %v", m.BackoffBase, m.BackoffCap)
	case m.Budget < 0 || m.Budget > 1:
		return fmt.Errorf("-retry-budget %v is outside [0, 1] (a share of first tries such as 0.2; 0: no budget)", m.Budget)
	case m.Throttle != 0 && m.Throttle < 1:
		return fmt.Errorf("-throttle %v must be 1 or more (K such as 2; 0: no throttling)", m.Throttle)
	}
	return nil
}

// String is a short label of m for reports and start-up lines, such as
// "timeout 1s, 2 retries on 503,timeout, exp backoff 10ms–1s,
// Retry-After, budget 20%, throttle K=2".
func (m Model) String() string {
	var parts []string
	if m.Timeout > 0 {
		parts = append(parts, "timeout "+m.Timeout.String())
	}
	switch {
	case m.Retries == 1:
		parts = append(parts, "1 retry on "+m.retryOn().String())
	case m.Retries > 1:
		parts = append(parts, fmt.Sprintf("%d retries on %s", m.Retries, m.retryOn()))
	default:
		parts = append(parts, "no retries")
	}
	if m.Retries > 0 && m.Backoff == BackoffExp {
		limit := "uncapped"
		if m.BackoffCap > 0 {
			limit = m.BackoffCap.String()
		}
		parts = append(parts, fmt.Sprintf("exp backoff %v–%s", m.BackoffBase, limit))
	}
	if m.Retries > 0 && m.RetryAfter {
		parts = append(parts, "Retry-After")
	}
	if m.Retries > 0 && m.Budget > 0 {
		parts = append(parts, fmt.Sprintf("budget %.4g%%", m.Budget*100))
	}
	if m.Throttle > 0 {
		parts = append(parts, fmt.Sprintf("throttle K=%g", m.Throttle))
	}
	if m.Retries > 0 && m.MarkRetries {
		parts = append(parts, "retries marked")
	}
	if m.SendDeadline {
		parts = append(parts, "deadline header")
	}
	return strings.Join(parts, ", ")
}

// The lab's named client populations (-clients), from the classic client
// to one with every defence: from retry on each adds one thing to the one
// before (throttle adds its throttle to backoff, not to budget, so that
// budget and throttle compare as the two ways of bounding retries).
var named = []struct {
	name string
	m    Model
}{
	{"none", Model{}},
	{"untuned", untunedModel},
	{"retry", retryModel},
	{"backoff", backoffModel},
	{"budget", with(backoffModel, func(m *Model) { m.Budget = 0.2 })},
	{"throttle", with(backoffModel, func(m *Model) { m.Throttle = 2 })},
}

// untunedModel is the retry loop of a typical hand-written client: under
// overload it sends up to six attempts per request.
var untunedModel = Model{
	Timeout: 500 * time.Millisecond,
	Retries: 5,
	RetryOn: RetryOn{Status503: true, Timeout: true},
	Backoff: BackoffNone,
}

// retryModel is a typical naive client. Like the clients behind Envoy or
// a gRPC stack, it marks its retries (so do the populations built on it).
var retryModel = Model{
	Timeout:     time.Second,
	Retries:     2,
	RetryOn:     RetryOn{Status503: true, Timeout: true},
	Backoff:     BackoffNone,
	MarkRetries: true,
}

// backoffModel is retryModel made polite.
var backoffModel = with(retryModel, func(m *Model) {
	m.Backoff, m.BackoffBase, m.BackoffCap = BackoffExp, 10*time.Millisecond, time.Second
	m.RetryAfter = true
})

func with(m Model, f func(*Model)) Model {
	f(&m)
	return m
}

// Names lists the named client populations, from the classic client to
// the most defended.
func Names() []string {
	names := make([]string, len(named))
	for i, n := range named {
		names[i] = n.name
	}
	return names
}

// Named returns the named client population (-clients).
func Named(name string) (Model, error) {
	for _, n := range named {
		if n.name == name {
			return n.m, nil
		}
	}
	return Model{}, fmt.Errorf("-clients %q is not one of %s", name, strings.Join(Names(), ", "))
}
