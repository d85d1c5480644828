package main

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/cpuset"
)

// TestCompareRefusesBadCPUSets: every bad CPU set is refused before
// anything starts, with exit status 2 and an error naming the flag and
// what it accepts.
func TestCompareRefusesBadCPUSets(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("CPU sets need Linux")
	}
	all, err := cpuset.Affinity()
	require.NoError(t, err)
	f := func(want []string, args ...string) {
		t.Helper()
		code, _, errs := invoke(t, append([]string{"compare", "-kvserver", "/nonexistent/kvserver"}, args...)...)
		assert.Equal(t, 2, code, "%q: %s", args, errs)
		for _, w := range want {
			assert.Contains(t, errs, w, "%q", args)
		}
	}
	f([]string{"-server-cpus", "write a list such as 0-7"}, "-server-cpus", "x")
	f([]string{"-server-cpus", "no CPUs named"}, "-server-cpus=")
	f([]string{"-loader-cpus", "runs backwards"}, "-loader-cpus", "3-1")
	f([]string{"-loader-cpus 1023", "not on this machine"}, "-server-cpus", "0", "-loader-cpus", "1023")
	f([]string{"-server-cpus 0 and -loader-cpus 0 overlap"}, "-server-cpus", "0", "-loader-cpus", "0")
	f([]string{"-pin is shorthand for -server-cpus 0 -loader-cpus 1"}, "-pin", "-server-cpus", "0")
	f([]string{"-server-cpus " + all.String() + " leaves none", "give -loader-cpus too"}, "-server-cpus", all.String())
	f([]string{"-execs", "handler, worker"}, "-execs", "goroutine")
	f([]string{"-limits", "gradient2, vegas, aimd"}, "-limits", "fixed")
	t.Setenv("LOADTEST_LOADER_CPUS", "a-b")
	f([]string{"LOADTEST_LOADER_CPUS", "write a list such as"})
}
