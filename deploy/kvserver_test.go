package deploy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kvpool/kvpool/internal/server"
	"github.com/kvpool/kvpool/internal/store"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// kvserver is a real kvserver, in process, on a loopback port and a
// temporary store, configured so that every metric family it can export
// is exported: the default pool (auto: a queue per class, write pacing)
// and -io-concurrency > 0.
type kvserver struct {
	addr   string // 127.0.0.1:PORT
	client *http.Client
}

func startKVServer(t *testing.T) *kvserver {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	cfg.Pool = "auto"
	cfg.Pcfg.Workers = 2
	cfg.CacheMiB = 8
	cfg.IOConcurrency = 2
	r, err := cfg.Resolve()
	require.NoError(t, err)
	st, err := store.Open(store.Options{Dir: cfg.DataDir, CacheBytes: int64(cfg.CacheMiB) << 20})
	require.NoError(t, err)
	srv, err := server.New(r, st, server.Options{PebbleMetrics: st.Metrics})
	if err != nil {
		st.Close()
		require.NoError(t, err)
	}
	ln, err := server.Listen(cfg.Addr)
	if err != nil {
		st.Close()
		require.NoError(t, err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	kv := &kvserver{addr: ln.Addr().String(), client: &http.Client{Timeout: 10 * time.Second}}
	t.Cleanup(func() {
		kv.client.CloseIdleConnections()
		require.NoError(t, srv.Shutdown(context.Background()))
		require.NoError(t, <-served)
		require.NoError(t, st.Close())
	})
	return kv
}

// do sends one request and returns its status; extra headers come in
// name, value pairs.
func (kv *kvserver) do(t *testing.T, method, target, body string, header ...string) int {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+kv.addr+target, strings.NewReader(body))
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := kv.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	return resp.StatusCode
}

// exercise sends one request of each kind, so that every labelled series
// that exists only once used has been created: n rounds of a PUT, a GET of
// it, a GET of an absent key, a DELETE, a POST (405), and a PUT with a
// deadline (X-Request-Timeout-Ms).
func (kv *kvserver) exercise(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		key := fmt.Sprintf("/v0/entity?id=k%d", i)
		require.Equal(t, http.StatusCreated, kv.do(t, http.MethodPut, key, "v"))
		require.Equal(t, http.StatusOK, kv.do(t, http.MethodGet, key, ""))
		require.Equal(t, http.StatusNotFound, kv.do(t, http.MethodGet, key+"-absent", ""))
		require.Equal(t, http.StatusAccepted, kv.do(t, http.MethodDelete, key, ""))
		require.Equal(t, http.StatusMethodNotAllowed, kv.do(t, http.MethodPost, key, ""))
		require.Equal(t, http.StatusCreated, kv.do(t, http.MethodPut, key, "v", "X-Request-Timeout-Ms", "10000"))
	}
}

// families scrapes /metrics once.
func (kv *kvserver) families(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := kv.client.Get("http://" + kv.addr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return mfs
}
