package metrics

import (
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// ConfigLabels are the label names kvserver_config_info always has. Tools that
// compare runs (the load lab's harness) read them back, so they are part
// of kvserver's contract: add to them, never rename.
var ConfigLabels = []string{
	"pool", "workers", "cap", "overflow", "queue_timeout",
	"sync", "cache_mb", "version", "io_delay", "io_delay_dist",
	"io_concurrency", "drop_closed_after",
}

// NewConfigInfo registers kvserver_config_info, a gauge at 1 whose labels
// are the server's effective settings. labels must hold every name in
// ConfigLabels (it panics otherwise, like MustRegister); extra names are
// exported as well.
func NewConfigInfo(reg prometheus.Registerer, labels prometheus.Labels) prometheus.Gauge {
	for _, name := range ConfigLabels {
		if _, ok := labels[name]; !ok {
			panic("metrics: kvserver_config_info without label " + name)
		}
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "kvserver_config_info",
		Help:        "The server's effective configuration, in its labels; the value is always 1.",
		ConstLabels: labels,
	})
	g.Set(1)
	reg.MustRegister(g)
	return g
}

// Version is the running binary's version: its main module's version when
// built from a tagged module, else the first 12 digits of the VCS revision
// it was built from, else "devel".
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return versionOf(bi)
}

func versionOf(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && s.Value != "" {
			return s.Value[:min(12, len(s.Value))]
		}
	}
	return "devel"
}
