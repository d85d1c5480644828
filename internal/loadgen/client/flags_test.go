package client

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFlagsRoundTrip: the client flags given, read back by Args, give the
// same Model through FromArgs: what a comparison records of its clients
// runs them again.
func TestFlagsRoundTrip(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f Flags
	f.Add(fs)
	fs.Int("rate", 0, "not a client flag")
	require.NoError(t, fs.Parse([]string{"-rate", "5", "-client-timeout", "300ms", "-clients", "untuned", "-retry-on", "503"}))
	m, err := f.Model(fs)
	require.NoError(t, err)
	want, err := Named("untuned")
	require.NoError(t, err)
	want.Timeout, want.RetryOn = 300*time.Millisecond, RetryOn{Status503: true}
	assert.Equal(t, want, m)

	args := Args(fs)
	assert.NotContains(t, args, "-rate=5", "only client flags")
	again, err := FromArgs(args)
	require.NoError(t, err)
	assert.Equal(t, m, again)

	none := flag.NewFlagSet("t", flag.ContinueOnError)
	none.Int("rate", 0, "")
	require.NoError(t, none.Parse([]string{"-rate", "5"}))
	assert.Empty(t, Args(none), "no client flag given")

	_, err = FromArgs([]string{"-clients", "polite"})
	assert.ErrorContains(t, err, "polite")
	_, err = FromArgs([]string{"-clients", "retry", "-client-timeout", "0s"})
	assert.ErrorContains(t, err, "above 0")
	_, err = FromArgs([]string{"-clients", "retry", "extra"})
	assert.ErrorContains(t, err, "unexpected")
}
