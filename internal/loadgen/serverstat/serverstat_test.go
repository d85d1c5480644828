package serverstat

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What kvserver's /metrics serves, cut down to the neighbours of the two
// metrics read (their HELP and TYPE lines, and names that share a prefix).
const exposition = `# HELP go_sched_gomaxprocs_threads The current runtime.GOMAXPROCS setting.
# TYPE go_sched_gomaxprocs_threads gauge
go_sched_gomaxprocs_threads 4
# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 12.34
process_cpu_seconds_total_other 99
kvserver_http_requests_total{code="200"} 5
`

func serve(t *testing.T, status int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestCPUReadsTheMetricsPage(t *testing.T) {
	url := serve(t, http.StatusOK, exposition)
	cpu, cpus, err := CPU(context.Background(), url+"/")
	require.NoError(t, err)
	assert.Equal(t, 12340*time.Millisecond, cpu)
	assert.Equal(t, 4, cpus)
}

func TestCPUFailsSayingWhy(t *testing.T) {
	f := func(url, want string) {
		t.Helper()
		_, _, err := CPU(context.Background(), url)
		require.Error(t, err)
		assert.Contains(t, err.Error(), want)
	}
	f(serve(t, http.StatusNotFound, ""), "answered 404")
	f(serve(t, http.StatusOK, "go_goroutines 5\ngo_sched_gomaxprocs_threads 2\n"), "no process_cpu_seconds_total")
	f(serve(t, http.StatusOK, "process_cpu_seconds_total 1\n"), "no go_sched_gomaxprocs_threads")
	f("http://127.0.0.1:1", "cannot read the server's CPU from http://127.0.0.1:1/metrics")
}

func TestParse(t *testing.T) {
	f := func(in string, wantCPU time.Duration, wantCPUs int, wantErr string) {
		t.Helper()
		cpu, cpus, err := Parse(strings.NewReader(in))
		if wantErr != "" {
			require.Error(t, err)
			assert.Contains(t, err.Error(), wantErr)
			return
		}
		require.NoError(t, err)
		assert.Equal(t, wantCPU, cpu)
		assert.Equal(t, wantCPUs, cpus)
	}
	f(exposition, 12340*time.Millisecond, 4, "")
	f("process_cpu_seconds_total 1.5e+03\ngo_sched_gomaxprocs_threads 64\n", 1500*time.Second, 64, "")
	f("process_cpu_seconds_total 2 1700000000000\ngo_sched_gomaxprocs_threads 1 1700000000000\n", 2*time.Second, 1, "") // timestamps
	f("process_cpu_seconds_total x\ngo_sched_gomaxprocs_threads 1\n", 0, 0, `value "x", not a count`)
	f("process_cpu_seconds_total -1\ngo_sched_gomaxprocs_threads 1\n", 0, 0, "not a count")
	f("process_cpu_seconds_total 1\ngo_sched_gomaxprocs_threads 0\n", 0, 0, "of 1 or more")
	f("", 0, 0, "no process_cpu_seconds_total")
}
