package compare

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/kvpool/kvpool/internal/compare/result"
	"github.com/kvpool/kvpool/internal/loadgen/config"
)

// loadConfig is the loader's configuration for srv's workload against it.
func (r *runner) loadConfig(srv *instance) config.Config {
	cfg := config.Default()
	cfg.Target = srv.URL
	cfg.Workload.Mix = srv.mix
	cfg.Workload.Keys = r.o.Keys
	cfg.Workload.ValueSize = r.o.ValueSize
	cfg.Progress = 0
	cfg.KeepResults = false
	cfg.CPUs = r.pl.Loader // Loops 0: as many event loops as the step's rate needs, every CPU of the set for a search or a closed loop
	return cfg
}

// latenciesOf are the tables' percentiles of h (µs, as the loader records).
func latenciesOf(h *hdrhistogram.Histogram) result.Latencies {
	at := func(p float64) time.Duration { return time.Duration(h.ValueAtPercentile(p)) * time.Microsecond }
	return result.Latencies{P50: at(50), P90: at(90), P99: at(99), P999: at(99.9), Max: time.Duration(h.Max()) * time.Microsecond}
}

// chartPercentiles are the points of the latency-by-percentile chart.
var chartPercentiles = []float64{50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 99.999}

// distributionOf is the corrected and uncorrected latencies (µs
// histograms) at ps, for the latency-by-percentile chart.
func distributionOf(corrected, uncorrected *hdrhistogram.Histogram, ps []float64) *result.Distribution {
	d := &result.Distribution{Percentiles: ps}
	for _, p := range ps {
		d.Corrected = append(d.Corrected, time.Duration(corrected.ValueAtPercentile(p))*time.Microsecond)
		d.Uncorrected = append(d.Uncorrected, time.Duration(uncorrected.ValueAtPercentile(p))*time.Microsecond)
	}
	return d
}
