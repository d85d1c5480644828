package client

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNamed(t *testing.T) {
	assert.Equal(t, []string{"none", "untuned", "retry", "backoff", "budget", "throttle"}, Names())
	for _, name := range Names() {
		m, err := Named(name)
		require.NoError(t, err, name)
		assert.NoError(t, m.Validate(), name)
	}
	none, _ := Named("none")
	assert.True(t, none.IsZero())

	untuned, _ := Named("untuned")
	assert.Equal(t, Model{Timeout: 500 * time.Millisecond, Retries: 5, RetryOn: RetryOn{Status503: true, Timeout: true}, Backoff: BackoffNone}, untuned)
	retry, _ := Named("retry")
	assert.Equal(t, Model{Timeout: time.Second, Retries: 2, RetryOn: RetryOn{Status503: true, Timeout: true}, Backoff: BackoffNone, MarkRetries: true}, retry)
	backoff, _ := Named("backoff")
	want := retry
	want.Backoff, want.BackoffBase, want.BackoffCap, want.RetryAfter = BackoffExp, 10*time.Millisecond, time.Second, true
	assert.Equal(t, want, backoff)
	budget, _ := Named("budget")
	want.Budget = 0.2
	assert.Equal(t, want, budget)
	throttle, _ := Named("throttle")
	want.Budget, want.Throttle = 0, 2
	assert.Equal(t, want, throttle)

	_, err := Named("polite")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `-clients "polite" is not one of none, untuned, retry, backoff, budget, throttle`)

	names := Names()
	names[0] = "changed"
	assert.Equal(t, "none", Names()[0], "Names returns a copy")
}

func TestParseRetryOn(t *testing.T) {
	f := func(in string, want RetryOn, str string) {
		t.Helper()
		got, err := ParseRetryOn(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
		assert.Equal(t, str, got.String(), in)
		again, err := ParseRetryOn(got.String())
		require.NoError(t, err)
		assert.Equal(t, got, again, "String reads back")
	}
	f("", RetryOn{}, "")
	f("503", RetryOn{Status503: true}, "503")
	f("timeout", RetryOn{Timeout: true}, "timeout")
	f("error", RetryOn{Error: true}, "error")
	f("timeout,503", RetryOn{Status503: true, Timeout: true}, "503,timeout")
	f("error, Timeout ,503", RetryOn{Status503: true, Timeout: true, Error: true}, "503,timeout,error")
	f("503,503", RetryOn{Status503: true}, "503")

	for _, bad := range []string{"bogus", "503,", "503;timeout", "5xx", "timeouts"} {
		_, err := ParseRetryOn(bad)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "-retry-on", bad)
		assert.Contains(t, err.Error(), "503, timeout or error", bad)
	}
}

func TestModelString(t *testing.T) {
	f := func(name, want string) {
		t.Helper()
		m, err := Named(name)
		require.NoError(t, err)
		assert.Equal(t, want, m.String(), name)
	}
	f("none", "no retries")
	f("untuned", "timeout 500ms, 5 retries on 503,timeout")
	f("retry", "timeout 1s, 2 retries on 503,timeout, retries marked")
	f("backoff", "timeout 1s, 2 retries on 503,timeout, exp backoff 10ms–1s, Retry-After, retries marked")
	f("budget", "timeout 1s, 2 retries on 503,timeout, exp backoff 10ms–1s, Retry-After, budget 20%, retries marked")
	f("throttle", "timeout 1s, 2 retries on 503,timeout, exp backoff 10ms–1s, Retry-After, throttle K=2, retries marked")
	all := Model{Timeout: time.Second, Retries: 2, Backoff: BackoffExp, BackoffBase: 10 * time.Millisecond, BackoffCap: time.Second,
		RetryAfter: true, Budget: 0.2, Throttle: 2, SendDeadline: true}
	assert.Equal(t, "timeout 1s, 2 retries on 503,timeout, exp backoff 10ms–1s, Retry-After, budget 20%, throttle K=2, deadline header", all.String())
	assert.Equal(t, "1 retry on error, exp backoff 5ms–uncapped, budget 12.5%",
		Model{Retries: 1, RetryOn: RetryOn{Error: true}, Backoff: BackoffExp, BackoffBase: 5 * time.Millisecond, Budget: 0.125}.String())
}

func TestValidate(t *testing.T) {
	ok := func(m Model) {
		t.Helper()
		assert.NoError(t, m.Validate(), "%+v", m)
	}
	bad := func(m Model, want string) {
		t.Helper()
		err := m.Validate()
		require.Error(t, err, "%+v", m)
		assert.Contains(t, err.Error(), want)
	}
	ok(Model{})
	ok(Model{Retries: 3, Backoff: BackoffExp, BackoffBase: time.Second, BackoffCap: time.Second})
	// Cap 0 is no cap, whatever the base.
	ok(Model{Retries: 3, Backoff: BackoffExp, BackoffBase: 2 * time.Second})
	ok(Model{Budget: 1, Throttle: 1})
	bad(Model{Timeout: -1}, "-client-timeout")
	bad(Model{Retries: -1}, "-retries -1")
	bad(Model{Backoff: "linear"}, `-backoff "linear"`)
	bad(Model{Backoff: BackoffExp}, "needs -backoff-base above 0")
	bad(Model{Backoff: BackoffExp, BackoffBase: 2 * time.Second, BackoffCap: time.Second}, "-backoff-base 2s is above -backoff-cap 1s")
	bad(Model{BackoffCap: -time.Second}, "-backoff-cap")
	bad(Model{Budget: 1.5}, "-retry-budget 1.5")
	bad(Model{Budget: -0.1}, "-retry-budget")
	bad(Model{Throttle: 0.5}, "-throttle 0.5")
}

// The JSON names are the contract of summary.json.
func TestModelJSON(t *testing.T) {
	m, _ := Named("budget")
	m.Throttle, m.SendDeadline, m.RetryOn.Error = 2, true, true
	b, err := json.Marshal(m)
	require.NoError(t, err)
	assert.JSONEq(t, `{"timeout_ns":1000000000,"retries":2,"retry_on":{"503":true,"timeout":true,"error":true},"backoff":"exp",
		"backoff_base_ns":10000000,"backoff_cap_ns":1000000000,"retry_after":true,"budget":0.2,"throttle":2,"send_deadline":true,
		"mark_retries":true}`, string(b))
	var back Model
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, m, back)
}

// Retries are marked on the wire where the model says so: the named
// populations behind a proxy or an RPC stack do, untuned and none do not;
// without retries the mark is no model at all.
func TestMarkRetries(t *testing.T) {
	for _, name := range Names() {
		m, err := Named(name)
		require.NoError(t, err)
		want := name != "none" && name != "untuned"
		assert.Equal(t, want, m.MarkRetries, name)
	}
	assert.True(t, (&Model{MarkRetries: true}).IsZero(), "nothing to mark without retries")
	assert.False(t, (&Model{Retries: 1, MarkRetries: true}).IsZero())
	assert.Equal(t, "1 retry on 503,timeout, retries marked", Model{Retries: 1, MarkRetries: true}.String())
}

func TestMostAttempts(t *testing.T) {
	for name, want := range map[string]float64{"none": 1, "untuned": 6, "retry": 3, "backoff": 3, "budget": 1.2, "throttle": 3} {
		m, err := Named(name)
		require.NoError(t, err)
		assert.InDelta(t, want, m.MostAttempts(), 1e-9, name)
	}
	assert.Equal(t, 1.0, (&Model{Budget: 0.5}).MostAttempts(), "a budget without retries retries nothing")
}
