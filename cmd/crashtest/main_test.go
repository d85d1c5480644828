package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvpool/kvpool/internal/harness/harnesstest"
)

// kvserverBin is the kvserver binary the tests run, built once by TestMain
// (with -race when this test is).
var kvserverBin string

func TestMain(m *testing.M) {
	os.Exit(harnesstest.RunWithKVServer(m, &kvserverBin, harnesstest.RaceEnabled))
}

// crashtest runs the command with args and returns its exit code and output.
func crashtest(t *testing.T, bin string, args ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	args = append([]string{"-kvserver", bin, "-dir", t.TempDir(), "-min-run", "100ms", "-max-run", "400ms"}, args...)
	code := run(context.Background(), args, &out, &errOut)
	t.Logf("crashtest %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
	return code, out.String() + errOut.String()
}

// TestCrashSync: with -sync, two kill -9 cycles lose no acknowledged write.
func TestCrashSync(t *testing.T) {
	code, out := crashtest(t, kvserverBin, "-mode", "crash", "-cycles", "2")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "0 lost, 0 wrong")
}

// TestCrashNoSyncIsMeasured: without -sync a kill -9 may lose acknowledged
// writes; the run measures and prints the loss, and passes unless a value
// read back is wrong.
func TestCrashNoSyncIsMeasured(t *testing.T) {
	code, out := crashtest(t, kvserverBin, "-mode", "crash", "-sync=false", "-cycles", "1")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "lost per kill -9 without -sync: [")
	assert.Contains(t, out, " 0 wrong")
}

// TestDrain: SIGTERM under load completes the request in flight, refuses
// new connections, exits 0, and loses nothing acknowledged.
func TestDrain(t *testing.T) {
	code, out := crashtest(t, kvserverBin, "-mode", "drain")
	assert.Equal(t, 0, code)
	assert.NotContains(t, out, "FAIL")
	assert.Contains(t, out, "ok   the PUT in flight at SIGTERM was answered 201")
}

// TestForgetfulServerFails: the checks can fail. A "kvserver" that starts
// on a fresh directory each time loses every acknowledged write, and the
// crash run must say so and exit 1; its drain run must fail too.
func TestForgetfulServerFails(t *testing.T) {
	fresh := t.TempDir()
	script := filepath.Join(t.TempDir(), "forgetful-kvserver")
	// A later -data wins over crashtest's own.
	body := fmt.Sprintf("#!/bin/sh\nexec %q \"$@\" -data \"$(mktemp -d -p %q)\"\n", kvserverBin, fresh)
	require.NoError(t, os.WriteFile(script, []byte(body), 0o755))

	code, out := crashtest(t, script, "-mode", "crash", "-cycles", "1", "-min-run", "100ms", "-max-run", "100ms")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "crashtest crash: FAIL")
	assert.NotContains(t, out, " 0 lost,")

	code, out = crashtest(t, script, "-mode", "drain", "-min-run", "100ms", "-max-run", "100ms")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "FAIL after a restart")
}

func TestUsage(t *testing.T) {
	f := func(args ...string) {
		t.Helper()
		var out bytes.Buffer
		assert.Equal(t, 2, run(context.Background(), args, &out, &out), "%q", args)
	}
	f("-mode", "sometimes")
	f("-cycles", "0")
	f("-min-run", "2s", "-max-run", "1s")
	f("stray")
}

// TestValueOf: values are a function of the key, differ between keys in
// content and length, and start with the key.
func TestValueOf(t *testing.T) {
	a, b := keyOf("r", 1, 2, 3), keyOf("r", 1, 2, 4)
	assert.Equal(t, valueOf(a), valueOf(a))
	assert.NotEqual(t, valueOf(a), valueOf(b))
	assert.True(t, bytes.HasPrefix(valueOf(a), []byte(a+"=")))
	lengths := map[int]bool{}
	for i := range 20 {
		lengths[len(valueOf(keyOf("r", 0, 0, i)))] = true
	}
	assert.Greater(t, len(lengths), 10, "lengths vary with the key")
}
