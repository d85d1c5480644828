package readme

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/harness"
	"github.com/kvpool/kvpool/internal/harness/harnesstest"
)

// TestVegetaScripts runs each vegeta script of loadtest/ (which
// loadtest/README.md lists) for a second against a kvserver on a free
// loopback port, through `go tool vegeta` as a fresh clone has it, and
// checks what each prints and writes: every request counted, the status
// codes, results.bin and latency.hgrm. A script run with bad arguments
// prints its usage and exits 2.
func TestVegetaScripts(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	bin, err := harnesstest.BuildKVServer(t.TempDir(), false)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := harness.Start(ctx, harness.Options{Binary: bin, TempDir: t.TempDir()})
	require.NoError(t, err)
	defer func() { assert.NoError(t, srv.Stop(time.Minute)) }()

	script := func(name string, args ...string) (string, string, int) {
		t.Helper()
		out := filepath.Join(t.TempDir(), "run")
		c := exec.CommandContext(ctx, filepath.Join(root, "loadtest", name), args...)
		c.Env = append(os.Environ(), "TARGET="+srv.URL, "KEYS=1", "VALUE_SIZE=64", "OUT="+out)
		b, err := c.CombinedOutput()
		code := 0
		if err != nil {
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "%s: %s", name, b)
			code = exit.ExitCode()
		}
		return string(b), out, code
	}
	// One id (KEYS=1), PUT first, so that every GET finds it stored.
	for _, run := range []struct {
		name string
		args []string
		code string
	}{
		{"vegeta-put.sh", []string{"200", "1s"}, "201"},
		{"vegeta-get.sh", []string{"200", "1s"}, "200"},
		{"vegeta-attack.sh", []string{"get", "100", "1s"}, "200"},
	} {
		text, out, code := script(run.name, run.args...)
		require.Equal(t, 0, code, "%s %v:\n%s", run.name, run.args, text)
		total, codes := vegetaCounts(t, text)
		assert.Greater(t, total, 0, run.name)
		assert.Equal(t, map[string]int{run.code: total}, codes, "%s: every request answered %s", run.name, run.code)
		assert.FileExists(t, filepath.Join(out, "results.bin"), run.name)
		assert.FileExists(t, filepath.Join(out, "latency.hgrm"), run.name)
	}

	text, _, code := script("vegeta-attack.sh", "post", "100", "1s")
	assert.Equal(t, 2, code, text)
	assert.Contains(t, text, "Usage: loadtest/vegeta-attack.sh get|put RATE DURATION")
}
