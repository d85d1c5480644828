package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestWritesRefusesFlagsItIgnores: exit 2 before anything starts, naming
// the flag; the flood's shape flags are checked against their bounds,
// and refused under another preset.
func TestWritesRefusesFlagsItIgnores(t *testing.T) {
	f := func(want string, args ...string) {
		t.Helper()
		code, _, errs := invoke(t, append([]string{"compare", "-kvserver", "/nonexistent/kvserver"}, args...)...)
		assert.Equal(t, 2, code, "%q: %s", args, errs)
		assert.Contains(t, errs, want, "%q", args)
	}
	w := func(args ...string) []string { return append([]string{"-preset", "writes"}, args...) }
	f("-cap does not apply to -preset writes", w("-cap", "64")...)
	f("-factor does not apply to -preset writes", w("-factor", "3")...)
	f("-rate does not apply to -preset writes", w("-rate", "1000")...)
	f("-flood-conns 16: want 64 to 1024 writers", w("-flood-conns", "16")...)
	f("-flood-value-size 100000: want 1 to 65536 bytes", w("-flood-value-size", "100000")...)
	f("ends past -read-for 20s", w("-read-for", "20s")...)
	f("-policies: the writes preset runs direct, kvserver's default and the pools of -pools", w("-policies", "reject")...)
	f("-preset queues has none", "-flood-conns", "512")
}
