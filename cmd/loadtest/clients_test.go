package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/loadgen/client"
	"github.com/kvpool/kvpool/internal/loadgen/saturate"
)

// parseAttack parses attack's flags as runAttack does, without running.
func parseAttack(t *testing.T, args ...string) (options, error) {
	t.Helper()
	var o options
	var maxErrors float64
	fs := attackFlags(&o, &maxErrors, &bytes.Buffer{})
	err := o.parse(fs, args)
	return o, err
}

func TestClientFlagsMakeTheModel(t *testing.T) {
	f := func(want client.Model, args ...string) {
		t.Helper()
		o, err := parseAttack(t, args...)
		require.NoError(t, err, "%q", args)
		assert.Equal(t, want, o.cfg.Client, "%q", args)
	}
	named := func(name string) client.Model {
		m, err := client.Named(name)
		require.NoError(t, err)
		return m
	}
	f(client.Model{})
	f(client.Model{}, "-clients", "none")
	for _, name := range client.Names() {
		f(named(name), "-clients", name)
	}
	f(client.Model{Timeout: 2 * time.Second, Retries: 3, RetryOn: client.RetryOn{Error: true, Timeout: true}, Backoff: client.BackoffExp,
		BackoffBase: time.Millisecond, BackoffCap: 5 * time.Second, RetryAfter: true, Budget: 0.1, Throttle: 1.5, SendDeadline: true, MarkRetries: true},
		"-client-timeout", "2s", "-retries", "3", "-retry-on", "timeout,error", "-backoff", "exp", "-backoff-base", "1ms",
		"-backoff-cap", "5s", "-retry-after", "-retry-budget", "0.1", "-throttle", "1.5", "-send-deadline", "-mark-retries")
	// The flags given override the population's fields, before or after it.
	budget := named("budget")
	budget.Retries, budget.Budget = 5, 0.5
	f(budget, "-retries", "5", "-clients", "budget", "-retry-budget", "0.5")
	backoff := named("backoff")
	backoff.Backoff, backoff.RetryAfter = client.BackoffNone, false
	f(backoff, "-clients", "backoff", "-backoff", "none", "-retry-after=false")
	// untuned: the hand-written retry loop, spelled out flag by flag.
	f(named("untuned"), "-client-timeout", "500ms", "-retries", "5", "-retry-on", "503,timeout", "-backoff", "none")
	untuned := named("untuned")
	untuned.Retries, untuned.MarkRetries = 3, true
	f(untuned, "-clients", "untuned", "-retries", "3", "-mark-retries")
	retry := named("retry")
	retry.MarkRetries = false
	f(retry, "-clients", "retry", "-mark-retries=false")
	// Cap 0 is no cap.
	f(client.Model{Retries: 1, Backoff: client.BackoffExp, BackoffBase: 2 * time.Second}, "-retries", "1", "-backoff", "exp", "-backoff-base", "2s")

	t.Setenv("LOADTEST_CLIENTS", "throttle")
	t.Setenv("LOADTEST_THROTTLE", "3")
	throttle := named("throttle")
	throttle.Throttle = 3
	f(throttle, "-q")
}

// Bad client flags exit 2, naming the flag.
func TestClientFlagErrorsExitTwo(t *testing.T) {
	f := func(want string, args ...string) {
		t.Helper()
		code, _, errs := invoke(t, append([]string{"attack"}, args...)...)
		assert.Equal(t, 2, code, "%q: %s", args, errs)
		assert.Contains(t, errs, want, "%q", args)
	}
	f("-retries -1 must be 0 or more", "-retries", "-1")
	f("-retry-budget 1.5 is outside [0, 1]", "-retry-budget", "1.5")
	f("-retry-budget -0.2 is outside [0, 1]", "-retry-budget", "-0.2")
	f("-throttle 0.5 must be 1 or more", "-throttle", "0.5")
	f("-backoff-base 2s is above -backoff-cap 1s", "-backoff", "exp", "-backoff-base", "2s", "-backoff-cap", "1s")
	f("-backoff exp needs -backoff-base above 0", "-backoff", "exp")
	f(`-backoff "linear" is not none or exp`, "-backoff", "linear")
	f("-client-timeout 0s must be above 0", "-client-timeout", "0")
	f("-client-timeout -1s must be above 0", "-client-timeout", "-1s")
	f("-client-timeout -1s must be above 0", "-clients", "retry", "-client-timeout", "-1s")
	f(`-retry-on "bogus"`, "-retry-on", "bogus")
	f("503, timeout or error", "-retry-on", "503,bogus")
	f(`-clients "polite" is not one of none, untuned, retry, backoff, budget, throttle`, "-clients", "polite")
	f("the client model (timeout 1s, 2 retries on 503,timeout, retries marked) needs -engine fast", "-clients", "retry", "-engine", "vegeta")
	f("the client model (1 retry on 503,timeout) needs an open-model run (-rate above 0)", "-retries", "1", "-rate", "0", "-duration", "1s")
	f("-retries -1", "-clients", "budget", "-retries", "-1")

	t.Setenv("LOADTEST_RETRY_BUDGET", "2")
	f("-retry-budget 2 is outside [0, 1]")
}

// saturate takes the client flags too, and refuses bad ones the same way.
func TestSaturateTakesClientFlags(t *testing.T) {
	var o options
	var sc saturate.Config
	var so saturateOptions
	fs := saturateFlags(&o, &sc, &so, &bytes.Buffer{})
	require.NoError(t, o.parse(fs, []string{"-clients", "retry", "-retries", "1"}))
	assert.Equal(t, 1, o.cfg.Client.Retries)
	assert.Equal(t, time.Second, o.cfg.Client.Timeout)

	code, _, errs := invoke(t, "saturate", "-throttle", "0.5")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "-throttle 0.5")
}

// The model's own defaults (no -backoff given: none) leave the classic
// client: a run without client flags is what it was.
func TestNoClientFlagsIsTheClassicClient(t *testing.T) {
	o, err := parseAttack(t, "-rate", "0", "-duration", "1s", "-engine", "vegeta")
	require.NoError(t, err)
	assert.True(t, o.cfg.Client.IsZero())
	_, err = parseAttack(t, "-rate", "0", "-duration", "1s", "-engine", "vegeta", "-clients", "none", "-backoff", "none", "-retries", "0")
	assert.NoError(t, err, "spelling out the classic client is the classic client")
}
