package main

import (
	"os"
	"path/filepath"
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

// TestComparePublishThenRender publishes a committed comparison (a quick
// queues run) and renders the published copy again: the report is the
// one publishing wrote, byte for byte, as `make compare-publish` and
// `loadtest compare -render docs/report/<name>` rely on.
func TestComparePublishThenRender(t *testing.T) {
	run := filepath.Join(t.TempDir(), "compare-20261124T232938Z-queues")
	fixture := filepath.Join("..", "..", "internal", "compare", "render", "testdata", "queues", "compare.json")
	b, err := os.ReadFile(fixture)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(run, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(run, "compare.json"), b, 0o644))
	for _, pool := range []string{"direct", "lifo"} {
		require.NoError(t, os.MkdirAll(filepath.Join(run, "profiles", pool), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(run, "profiles", pool, "cpu.svg"), []byte("<svg/>"), 0o644))
	}
	dest := filepath.Join(t.TempDir(), "queues")
	code, out, errs := invoke(t, "compare", "-render", run, "-publish", dest)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "report: "+filepath.Join(dest, "REPORT.md"))
	published, err := os.ReadFile(filepath.Join(dest, "REPORT.md"))
	require.NoError(t, err)
	assert.Contains(t, string(published), "*Published from `compare-20261124T232938Z-queues` by `make compare-publish`")
	assert.Contains(t, string(published), "Profiles: cpu, mutex, block, allocs, heap.", "the raw profiles stayed in the run: named, not linked")
	assert.FileExists(t, filepath.Join(dest, "profiles", "lifo", "cpu.svg"), "the call graphs are published")
	assert.FileExists(t, filepath.Join(dest, "compare.json"))

	code, _, errs = invoke(t, "compare", "-render", dest)
	require.Equal(t, 0, code, errs)
	again, err := os.ReadFile(filepath.Join(dest, "REPORT.md"))
	require.NoError(t, err)
	assert.Equal(t, string(published), string(again), "-render of a published report writes it again byte for byte")

	code, _, errs = invoke(t, "compare", "-render", dest, "-quick")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "-render takes no other flag but -publish")
	code, _, errs = invoke(t, "compare", "-publish", dest)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "-publish needs -render RUN")
}

// TestCommittedReportsRenderAgain: every report committed under
// docs/report keeps the compare.json it was written from, and rendering a
// copy of it writes the committed REPORT.md again byte for byte, so that a
// change to the report's code shows in these files' diffs, and none is
// prose nobody can reproduce.
func TestCommittedReportsRenderAgain(t *testing.T) {
	reports, err := filepath.Glob(filepath.Join("..", "..", "docs", "report", "*"))
	require.NoError(t, err)
	for _, dir := range reports {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			require.FileExists(t, filepath.Join(dir, "compare.json"), "a published report keeps the compare.json it was written from")
			committed, err := os.ReadFile(filepath.Join(dir, "REPORT.md"))
			require.NoError(t, err)
			copied := filepath.Join(t.TempDir(), filepath.Base(dir))
			require.NoError(t, os.CopyFS(copied, os.DirFS(dir)))
			code, _, errs := invoke(t, "compare", "-render", copied)
			require.Equal(t, 0, code, errs)
			again, err := os.ReadFile(filepath.Join(copied, "REPORT.md"))
			require.NoError(t, err)
			assert.Equal(t, string(committed), string(again))
		})
	}
}
