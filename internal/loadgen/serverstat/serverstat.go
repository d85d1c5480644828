// Package serverstat reads a server's own CPU use from its Prometheus
// /metrics page, so that a load run can say whether the server or the
// loader ran out of CPU. kvserver exposes both figures it needs through
// the Go client's standard collectors.
package serverstat

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The metrics read: the process's cumulative user+system CPU time, and
// how many CPUs its Go scheduler may run code on at once (GOMAXPROCS,
// which the runtime sizes to the process's CPU affinity).
const (
	CPUSecondsMetric = "process_cpu_seconds_total"
	GOMAXPROCSMetric = "go_sched_gomaxprocs_threads"
)

// readTimeout bounds one scrape: a reading that comes late is worth
// less than none (the step it brackets goes on without it).
const readTimeout = 3 * time.Second

// CPU scrapes target's /metrics once and returns the server's cumulative
// CPU time and the CPUs it may use. It fits saturate.Config.ServerCPU:
//
//	sc.ServerCPU = func(ctx context.Context) (time.Duration, int, error) { return serverstat.CPU(ctx, target) }
func CPU(ctx context.Context, target string) (cpu time.Duration, cpus int, err error) {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	url := strings.TrimSuffix(target, "/") + "/metrics"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("cannot read the server's CPU: %w", err)
	}
	// One request on a connection closed after it: no idle keep-alive
	// connection is left to the server between steps.
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, fmt.Errorf("cannot read the server's CPU from %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("cannot read the server's CPU: %s answered %s", url, resp.Status)
	}
	cpu, cpus, err = Parse(resp.Body)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", url, err)
	}
	return cpu, cpus, nil
}

// Parse reads process_cpu_seconds_total and go_sched_gomaxprocs_threads
// from a Prometheus text exposition; both must be there, unlabelled.
func Parse(r io.Reader) (cpu time.Duration, cpus int, err error) {
	seconds, procs := math.NaN(), math.NaN()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		var dst *float64
		switch name {
		case CPUSecondsMetric:
			dst = &seconds
		case GOMAXPROCSMetric:
			dst = &procs
		default:
			continue
		}
		value, _, _ = strings.Cut(strings.TrimSpace(value), " ") // a timestamp may follow
		v, perr := strconv.ParseFloat(value, 64)
		if perr != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return 0, 0, fmt.Errorf("%s has the value %q, not a count", name, value)
		}
		*dst = v
	}
	if err := sc.Err(); err != nil {
		return 0, 0, fmt.Errorf("cannot read the metrics: %w", err)
	}
	switch {
	case math.IsNaN(seconds):
		return 0, 0, fmt.Errorf("no %s in the metrics: the server does not export its process's CPU (kvserver does)", CPUSecondsMetric)
	case math.IsNaN(procs) || procs < 1:
		return 0, 0, fmt.Errorf("no %s of 1 or more in the metrics: the server does not say how many CPUs it may use (kvserver does)", GOMAXPROCSMetric)
	}
	return time.Duration(seconds * float64(time.Second)), int(procs), nil
}
