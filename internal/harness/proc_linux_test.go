package harness

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStartInterruptedBeforeServing: a server killed by SIGINT before it
// served (a terminal's Ctrl-C between its fork and its own process group)
// makes Start wait for the caller's context to end, so that the caller
// sees an interrupted start rather than a failed one.
func TestStartInterruptedBeforeServing(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type started struct {
		err       error
		cancelled bool
	}
	done := make(chan started, 1)
	go func() {
		script := "echo $$ > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + " && kill -INT $$"
		_, err := Start(ctx, Options{Argv: []string{"sh", "-c", script}, DataDir: dir})
		done <- started{err, ctx.Err() != nil}
	}()
	// The context ends only once the process is gone (reaped by Start).
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		_, err = os.Stat("/proc/" + strings.TrimSpace(string(b)))
		return errors.Is(err, fs.ErrNotExist)
	}, time.Minute, time.Millisecond)
	cancel()
	got := <-done
	var se *StartError
	require.ErrorAs(t, got.err, &se)
	assert.True(t, got.cancelled, "Start returned before its context ended: the caller would call it a failure")
}
