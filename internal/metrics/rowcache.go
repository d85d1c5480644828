package metrics

import (
	"github.com/kvpool/kvpool/internal/store"
	"github.com/prometheus/client_golang/prometheus"
)

// RowCache exports the row cache's counters (-row-cache-mb), read from
// Stats at scrape time, so the GET path updates nothing but the cache's
// own counters, under the shard lock it holds anyway. It is registered
// only when the cache is on.
type RowCache struct {
	stats func() store.RowCacheStats

	hits, misses, evictions, dropped, entries, bytes, capacity *prometheus.Desc
}

// NewRowCache registers the row cache's collector; stats is called at each
// scrape.
func NewRowCache(reg prometheus.Registerer, stats func() store.RowCacheStats) *RowCache {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("kvserver_row_cache_"+name, help, nil, nil)
	}
	rc := &RowCache{
		stats:     stats,
		hits:      d("hits_total", "GETs answered from the row cache."),
		misses:    d("misses_total", "GETs that read the store (found or not); a found value then fills the cache."),
		evictions: d("evictions_total", "Entries dropped, least recently used first, to keep the row cache within -row-cache-mb (not those a write removed)."),
		dropped: d("fills_dropped_total",
			"Values read on a miss but not cached because a write to the same shard was in flight, began or ended during the read (the value may be older than that write, or than one another read returned)."),
		entries:  d("entries", "Keys in the row cache."),
		bytes:    d("bytes", "Bytes charged for the row cache's entries: keys, values and an estimate of each entry's overhead."),
		capacity: d("capacity_bytes", "The row cache's bound in bytes (-row-cache-mb)."),
	}
	reg.MustRegister(rc)
	return rc
}

// Describe implements prometheus.Collector.
func (rc *RowCache) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{rc.hits, rc.misses, rc.evictions, rc.dropped, rc.entries, rc.bytes, rc.capacity} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (rc *RowCache) Collect(ch chan<- prometheus.Metric) {
	s := rc.stats()
	counter, gauge := prometheus.CounterValue, prometheus.GaugeValue
	ch <- prometheus.MustNewConstMetric(rc.hits, counter, float64(s.Hits))
	ch <- prometheus.MustNewConstMetric(rc.misses, counter, float64(s.Misses))
	ch <- prometheus.MustNewConstMetric(rc.evictions, counter, float64(s.Evictions))
	ch <- prometheus.MustNewConstMetric(rc.dropped, counter, float64(s.Dropped))
	ch <- prometheus.MustNewConstMetric(rc.entries, gauge, float64(s.Entries))
	ch <- prometheus.MustNewConstMetric(rc.bytes, gauge, float64(s.Bytes))
	ch <- prometheus.MustNewConstMetric(rc.capacity, gauge, float64(s.Capacity))
}
