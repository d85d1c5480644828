package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestMetastableRefusesFlagsItIgnores: exit 2 before anything starts,
// naming the flag.
func TestMetastableRefusesFlagsItIgnores(t *testing.T) {
	f := func(want string, args ...string) {
		t.Helper()
		code, _, errs := invoke(t, append([]string{"compare", "-preset", "metastable", "-kvserver", "/nonexistent/kvserver"}, args...)...)
		assert.Equal(t, 2, code, "%q: %s", args, errs)
		assert.Contains(t, errs, want, "%q", args)
	}
	f("-cap does not apply to -preset metastable", "-cap", "64")
	f("-workers does not apply", "-workers", "8")
	f("-overload-duration does not apply", "-overload-duration", "5s")
	f("-io-delay does not apply", "-io-delay", "2ms")
	f("-policies: the metastable preset runs a fixed set of variants", "-policies", "block")
	f("-workload put: the metastable preset runs GETs only", "-workload", "put")
}
