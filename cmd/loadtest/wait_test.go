package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWait: 0 once the server answers 200; 1 with the last answer when it
// never does; 1 at once when the watched process is gone.
func TestWait(t *testing.T) {
	wait := func(args ...string) (int, string) {
		t.Helper()
		var out bytes.Buffer
		code := run(context.Background(), append([]string{"wait"}, args...), &out, &out)
		return code, out.String()
	}
	var probes atomic.Int32
	ready := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if probes.Add(1) < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer ready.Close()
	code, out := wait("-url", ready.URL)
	assert.Equal(t, 0, code, out)
	assert.Equal(t, int32(3), probes.Load())

	never := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer never.Close()
	code, out = wait("-url", never.URL, "-timeout", "100ms")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "503 Service Unavailable")

	gone := exec.Command("true")
	require.NoError(t, gone.Run())
	code, out = wait("-url", never.URL, "-timeout", "1m", "-pid", strconv.Itoa(gone.Process.Pid))
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "the server's process exited")

	code, _ = wait("-url", ready.URL, "stray")
	assert.NotEqual(t, 0, code)
	code, _ = wait("-timeout", "0s")
	assert.NotEqual(t, 0, code)
}
