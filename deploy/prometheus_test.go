package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/kvpool/kvpool/deploy/dashboard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// patience bounds every wait on Prometheus: generous, for a busy machine;
// the waits end as soon as the awaited state is seen.
const patience = 60 * time.Second

// A real Prometheus scrapes a real kvserver under a little load: the
// target is up, a dashboard query sees the load, Prometheus accepts every
// dashboard query and rule expression, and it evaluates the rules without
// error.
func TestPrometheusScrapesKVServer(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus is not on PATH (Debian: apt-get install prometheus; make observe installs it)")
	}
	kv := startKVServer(t)
	prom := startPrometheus(t, bin, kv.addr)

	waitFor(t, "the kvserver target to be up", func() (bool, string) {
		var targets struct {
			ActiveTargets []struct {
				Health    string `json:"health"`
				LastError string `json:"lastError"`
			} `json:"activeTargets"`
		}
		if err := prom.api("targets", nil, &targets); err != nil {
			return false, err.Error()
		}
		if len(targets.ActiveTargets) != 1 {
			return false, fmt.Sprintf("%d targets", len(targets.ActiveTargets))
		}
		return targets.ActiveTargets[0].Health == "up", targets.ActiveTargets[0].Health + " " + targets.ActiveTargets[0].LastError
	})

	// Load until a dashboard panel's query sees it: one round of requests
	// between polls, so the load stops as soon as Prometheus has it.
	queries, err := dashboard.Queries()
	require.NoError(t, err)
	i := slices.IndexFunc(queries, func(q dashboard.Query) bool { return q.Panel == "Request rate by code" })
	require.GreaterOrEqual(t, i, 0, "the dashboard has no panel Request rate by code")
	byCode := dashboard.Expand(queries[i].Expr, "5s")
	waitFor(t, "the request rate by code to show PUTs answered 201", func() (bool, string) {
		kv.exercise(t, 5)
		var res vector
		if err := prom.api("query", url.Values{"query": {byCode}}, &res); err != nil {
			return false, err.Error()
		}
		for _, s := range res.Result {
			if s.Metric["code"] == "201" {
				v, err := strconv.ParseFloat(s.Value[1].(string), 64)
				return err == nil && v > 0, fmt.Sprint(res.Result)
			}
		}
		return false, fmt.Sprint(res.Result)
	})

	// This Prometheus's own parser (its version may well be older than
	// the one the other tests use) accepts every query and rule.
	for _, q := range queries {
		if labelValues.MatchString(q.Expr) {
			continue // Grafana's, not PromQL
		}
		var res vector
		assert.NoError(t, prom.api("query", url.Values{"query": {dashboard.Expand(q.Expr, "5s")}}, &res), "panel %q", q.Panel)
	}
	rules := loadRules(t)
	for _, r := range rules {
		var res vector
		assert.NoError(t, prom.api("query", url.Values{"query": {r.Expr}}, &res), "rule %s", r.Alert)
	}

	waitFor(t, "every rule to have been evaluated without error", func() (bool, string) {
		var got struct {
			Groups []struct {
				Rules []struct {
					Name           string    `json:"name"`
					Health         string    `json:"health"`
					LastError      string    `json:"lastError"`
					LastEvaluation time.Time `json:"lastEvaluation"`
				} `json:"rules"`
			} `json:"groups"`
		}
		if err := prom.api("rules", nil, &got); err != nil {
			return false, err.Error()
		}
		n := 0
		for _, g := range got.Groups {
			for _, r := range g.Rules {
				if r.Health != "ok" || r.LastEvaluation.IsZero() {
					return false, fmt.Sprintf("%s: health %q %s, last evaluated %v", r.Name, r.Health, r.LastError, r.LastEvaluation)
				}
				n++
			}
		}
		return n == len(rules), fmt.Sprintf("%d rules loaded, want %d", n, len(rules))
	})
}

// vector is the data of an instant query's answer.
type vector struct {
	Result []struct {
		Metric map[string]string `json:"metric"`
		Value  []any             `json:"value"` // [time, "value"]
	} `json:"result"`
}

type prometheus struct {
	base   string // http://127.0.0.1:PORT/api/v1/
	client *http.Client
}

// startPrometheus runs bin on a free loopback port and a temporary data
// directory, scraping target and evaluating kvserver's rules every second,
// until the test ends; its output is shown if the test fails.
func startPrometheus(t *testing.T, bin, target string) *prometheus {
	t.Helper()
	rules, err := filepath.Abs(rulesFile)
	require.NoError(t, err)
	dir := t.TempDir()
	config := filepath.Join(dir, "prometheus.yml")
	require.NoError(t, os.WriteFile(config, fmt.Appendf(nil, `global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: kvserver
    static_configs:
      - targets: [%q]
`, rules, target), 0o644))
	addr := freeLoopbackAddr(t)

	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config.file="+config, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	// Stopped like make observe stops it; killed if it takes too long.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cancel()
		err := cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus (%v) said:\n%s", err, out.String())
		}
	})
	return &prometheus{base: "http://" + addr + "/api/v1/", client: &http.Client{Timeout: 10 * time.Second}}
}

// api GETs one Prometheus API endpoint and decodes its data into data; an
// answer other than status "success" is an error.
func (p *prometheus) api(endpoint string, params url.Values, data any) error {
	resp, err := p.client.Get(p.base + endpoint + "?" + params.Encode())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("%s: HTTP %d, %w", endpoint, resp.StatusCode, err)
	}
	if body.Status != "success" {
		return fmt.Errorf("%s: %s: %s", endpoint, body.Status, body.Error)
	}
	return json.Unmarshal(body.Data, data)
}

// waitFor polls cond until it holds, failing the test after patience with
// cond's last word on why not.
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s; last: %s", patience, what, why)
		}
		time.Sleep(100 * time.Millisecond) // a poll interval, not a synchronisation
	}
}

// freeLoopbackAddr is a loopback address no one listened on a moment ago.
// Prometheus takes only an address, not a listener; should another process
// take the port first, Prometheus exits and the test fails with its log.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// syncBuffer is a bytes.Buffer that the process's output and the test may
// use at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
