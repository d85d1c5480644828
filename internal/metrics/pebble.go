package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kvpool/kvpool/internal/store"
)

// Pebble exports a Pebble database's metrics, gathered at scrape time.
type Pebble struct {
	metrics func() store.PebbleMetrics
	descs   []pebbleMetric
}

type pebbleMetric struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(store.PebbleMetrics) float64
}

// NewPebble registers the Pebble collector; metrics is called at each scrape.
func NewPebble(reg prometheus.Registerer, metrics func() store.PebbleMetrics) *Pebble {
	p := &Pebble{metrics: metrics}
	add := func(name, help string, kind prometheus.ValueType, value func(store.PebbleMetrics) float64) {
		p.descs = append(p.descs, pebbleMetric{
			desc:  prometheus.NewDesc("kvserver_pebble_"+name, help, nil, nil),
			kind:  kind,
			value: value,
		})
	}
	counter, gauge := prometheus.CounterValue, prometheus.GaugeValue
	add("block_cache_bytes", "Bytes in the block cache.", gauge, func(m store.PebbleMetrics) float64 { return float64(m.BlockCache.Size) })
	add("block_cache_hits_total", "Block cache hits.", counter, func(m store.PebbleMetrics) float64 { return float64(m.BlockCache.Hits) })
	add("block_cache_misses_total", "Block cache misses.", counter, func(m store.PebbleMetrics) float64 { return float64(m.BlockCache.Misses) })
	add("bloom_filter_hits_total", "Reads a bloom filter saved from a data block.", counter, func(m store.PebbleMetrics) float64 { return float64(m.Filter.Hits) })
	add("bloom_filter_misses_total", "Bloom filter checks that could not skip a data block.", counter, func(m store.PebbleMetrics) float64 { return float64(m.Filter.Misses) })
	add("compactions_total", "Compactions completed.", counter, func(m store.PebbleMetrics) float64 { return float64(m.Compact.Count) })
	add("compaction_debt_bytes", "Estimated bytes compaction still has to write.", gauge, func(m store.PebbleMetrics) float64 { return float64(m.Compact.EstimatedDebt) })
	add("flushes_total", "Memtable flushes completed.", counter, func(m store.PebbleMetrics) float64 { return float64(m.Flush.Count) })
	add("memtable_bytes", "Bytes allocated by memtables.", gauge, func(m store.PebbleMetrics) float64 { return float64(m.MemTable.Size) })
	add("wal_bytes_written_total", "Bytes written to the write-ahead log.", counter, func(m store.PebbleMetrics) float64 { return float64(m.WAL.BytesWritten) })
	add("read_amplification", "Sublevels and levels a point read may consult.", gauge, func(m store.PebbleMetrics) float64 { return float64(m.ReadAmp()) })
	add("disk_usage_bytes", "Bytes the store uses on disk.", gauge, func(m store.PebbleMetrics) float64 { return float64(m.DiskSpaceUsage()) })
	add("l0_sublevels", "Sublevels in L0; many mean writes outpace compaction.", gauge, func(m store.PebbleMetrics) float64 { return float64(m.Levels[0].Sublevels) })
	add("l0_compaction_sublevels", "L0 sublevels at which compactions out of L0 start (the store's setting).", gauge, func(m store.PebbleMetrics) float64 { return float64(m.Thresholds.L0CompactSublevels) })
	add("l0_stall_sublevels", "L0 sublevels at which Pebble holds every write back (the store's setting).", gauge, func(m store.PebbleMetrics) float64 { return float64(m.Thresholds.L0StallSublevels) })
	add("write_stalls_total", "Times Pebble held every write back because writes outran flushes (memtables waiting) or compactions (L0 sublevels).", counter, func(m store.PebbleMetrics) float64 { return float64(m.WriteStalls) })
	add("synced_reads_total", "GETs that waited for a WAL sync before answering because a write to a key of their stripe was in flight (-sync only): no GET returns a value kill -9 could take back.", counter, func(m store.PebbleMetrics) float64 { return float64(m.SyncedReads) })
	add("write_stall_seconds_total", "Seconds Pebble held writes back, a stall under way included.", counter, func(m store.PebbleMetrics) float64 { return m.WriteStallTime.Seconds() })
	reg.MustRegister(p)
	return p
}

// Describe implements prometheus.Collector.
func (p *Pebble) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range p.descs {
		ch <- d.desc
	}
}

// Collect implements prometheus.Collector.
func (p *Pebble) Collect(ch chan<- prometheus.Metric) {
	m := p.metrics()
	for _, d := range p.descs {
		ch <- prometheus.MustNewConstMetric(d.desc, d.kind, d.value(m))
	}
}
