package flagenv

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestApply: one behaviour for every command: the command line wins, an
// empty variable is unset, a set one fills its flag, and a refused value
// is an error naming the variable, with the flag's own reason.
func TestApply(t *testing.T) {
	type want struct {
		rate    int
		timeout time.Duration
		quiet   bool
		fromEnv map[string]string
		err     string // "" for none
	}
	f := func(args []string, env map[string]string, w want) {
		t.Helper()
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		rate := fs.Int("rate", 10, "")
		timeout := fs.Duration("request-timeout", time.Second, "")
		quiet := fs.Bool("q", false, "")
		require.NoError(t, fs.Parse(args))
		set, err := Apply(fs, "TEST_", func(k string) string { return env[k] })
		if w.err != "" {
			require.Error(t, err)
			assert.Contains(t, err.Error(), w.err)
			return
		}
		require.NoError(t, err)
		assert.Equal(t, w.rate, *rate, "-rate")
		assert.Equal(t, w.timeout, *timeout, "-request-timeout")
		assert.Equal(t, w.quiet, *quiet, "-q")
		assert.Equal(t, w.fromEnv, set, "the flags set from the environment")
	}
	none := map[string]string{}
	f(nil, nil, want{rate: 10, timeout: time.Second, fromEnv: none})
	f(nil, map[string]string{"TEST_RATE": "250", "TEST_REQUEST_TIMEOUT": "2s", "TEST_Q": "true"},
		want{rate: 250, timeout: 2 * time.Second, quiet: true, fromEnv: map[string]string{"rate": "TEST_RATE", "request-timeout": "TEST_REQUEST_TIMEOUT", "q": "TEST_Q"}})
	f([]string{"-rate", "5"}, map[string]string{"TEST_RATE": "250"}, want{rate: 5, timeout: time.Second, fromEnv: none})
	f([]string{"-rate", "5"}, map[string]string{"TEST_RATE": "many"}, want{rate: 5, timeout: time.Second, fromEnv: none})
	f(nil, map[string]string{"TEST_RATE": ""}, want{rate: 10, timeout: time.Second, fromEnv: none})
	f(nil, map[string]string{"TEST_RATE": "many"}, want{err: `$TEST_RATE="many": parse error`})
	f(nil, map[string]string{"TEST_REQUEST_TIMEOUT": "soon"}, want{err: `$TEST_REQUEST_TIMEOUT="soon"`})
	f(nil, map[string]string{"rate": "250", "TEST_rate": "250"}, want{rate: 10, timeout: time.Second, fromEnv: none})
	assert.Equal(t, "KVPOOL_MAX_CONNS_PER_IP", Name("KVPOOL_", "max-conns-per-ip"))
}
