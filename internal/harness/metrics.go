package harness

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// configInfoMetric is the gauge whose labels are kvserver's effective
// settings (pool, workers, cap, overflow, queue_timeout, sync, cache_mb,
// version, io_delay, io_delay_dist, ...).
const configInfoMetric = "kvserver_config_info"

// Metrics scrapes /metrics and returns its families by name.
func (s *Server) Metrics(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	// The classic text format: what expfmt's text parser reads.
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	// One request on a connection closed after it: no idle keep-alive
	// connection is left to the server (which would hold up its shutdown,
	// or be answered 408 by kvserver's read timeout).
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot scrape kvserver metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("cannot scrape kvserver metrics: GET %s/metrics answered %s", s.URL, resp.Status)
	}
	return parseMetrics(resp.Body)
}

func parseMetrics(r io.Reader) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("cannot parse kvserver metrics: %w", err)
	}
	return families, nil
}

// ConfigInfo returns the labels of kvserver_config_info: the settings the
// server actually runs with, defaults resolved.
func (s *Server) ConfigInfo(ctx context.Context) (map[string]string, error) {
	return configInfo(s.Metrics(ctx))
}

// ServerConfig reads the labels of kvserver_config_info from target's
// /metrics. It returns nil when the target is not a kvserver (no such
// page or no such metric): a run goes on without them.
func ServerConfig(ctx context.Context, target string) map[string]string {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	labels, _ := (&Server{URL: strings.TrimSuffix(target, "/")}).ConfigInfo(ctx)
	return labels
}

// configInfo reads the labels of kvserver_config_info from families, or
// passes on err, the error of reading them.
func configInfo(families map[string]*dto.MetricFamily, err error) (map[string]string, error) {
	if err != nil {
		return nil, err
	}
	f := families[configInfoMetric]
	if f == nil || len(f.GetMetric()) == 0 {
		return nil, fmt.Errorf("%s is not in kvserver's /metrics; is the binary older than that metric? (rebuild it: make build)", configInfoMetric)
	}
	if n := len(f.GetMetric()); n != 1 {
		return nil, fmt.Errorf("%s has %d series in kvserver's /metrics, want 1", configInfoMetric, n)
	}
	labels := map[string]string{}
	for _, l := range f.GetMetric()[0].GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	return labels, nil
}
