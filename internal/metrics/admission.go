package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kvpool/kvpool/internal/pool"
)

// IOState is what the write pacing's signal says (see server's ioWatch):
// how close the store is to a write stall, and how long writes were paced
// by each of its queues.
type IOState struct {
	// Overload is the larger of the memtables' share of the stall point
	// and L0's sublevels' share of theirs: at 1 the store stalls writes.
	Overload float64
	// MemTablesPaced and L0Paced are how long writes were held to the
	// rate a waiting memtable or a deep L0 allowed, so far.
	MemTablesPaced, L0Paced time.Duration
}

// Admission exports the default pool's two admissions (pool.Classes,
// pool.Pacer): each class's queue, limit and refusals, and the write
// pacing's rate and signal, read at scrape time.
type Admission struct {
	classes func() (reads, writes pool.Stats)
	pace    func() pool.PaceStats
	io      func() IOState

	completed, rejected, queued, limit     *prometheus.Desc
	paced, rate, delayed, delay, pacedTime *prometheus.Desc
	overload                               *prometheus.Desc
}

// NewAdmission registers the admission's collector; the funcs are called
// at each scrape.
func NewAdmission(reg prometheus.Registerer, classes func() (reads, writes pool.Stats), pace func() pool.PaceStats, io func() IOState) *Admission {
	desc := func(metric, help string, variable ...string) *prometheus.Desc {
		return prometheus.NewDesc("kvserver_admission_"+metric, help, variable, nil)
	}
	a := &Admission{
		classes: classes, pace: pace, io: io,
		completed: desc("completed_total", "Requests each class admitted and ran (class: read = GET; write = PUT, DELETE).", "class"),
		rejected:  desc("rejected_total", "Requests each class answered 503 without running, by reason.", "class", "reason"),
		queued:    desc("queue_depth", "Requests waiting for a slot of their class now.", "class"),
		limit:     desc("limit", "Requests each class lets run at once now (its adaptive limit).", "class"),
		paced:     desc("write_paced", "1 while writes are held to what the store's flushes and compactions absorb, else 0."),
		rate: desc("write_rate_bytes", "Bytes a second writes may enter the store at while paced; 0 when they are not "+
			"(see kvserver_admission_write_paced)."),
		delayed:   desc("write_delayed_total", "Writes that waited for their share of the paced rate."),
		delay:     desc("write_delay_seconds_total", "Seconds writes waited for their share of the paced rate, together."),
		pacedTime: desc("write_paced_seconds_total", "Seconds writes were paced, by the store's queue that set the rate (memtables: one waits for its flush; l0: L0 has sublevels past the compaction point).", "cause"),
		overload: desc("io_overload", "How close the store is to holding every write back: the larger of the memtables' "+
			"share of their stall point and L0's sublevels' share of theirs; 1 is a write stall."),
	}
	reg.MustRegister(a)
	return a
}

// Describe implements prometheus.Collector.
func (a *Admission) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{a.completed, a.rejected, a.queued, a.limit, a.paced, a.rate, a.delayed, a.delay, a.pacedTime, a.overload} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (a *Admission) Collect(ch chan<- prometheus.Metric) {
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	reads, writes := a.classes()
	for _, c := range []struct {
		name string
		s    pool.Stats
	}{{"read", reads}, {"write", writes}} {
		counter(a.completed, float64(c.s.Completed), c.name)
		for r, n := range c.s.Rejected {
			counter(a.rejected, float64(n), c.name, pool.Reason(r).String())
		}
		gauge(a.queued, float64(c.s.Queued), c.name)
		gauge(a.limit, float64(c.s.Workers), c.name)
	}
	p := a.pace()
	paced, rate := 0.0, 0.0
	if p.Paced() {
		paced, rate = 1, p.Rate
	}
	gauge(a.paced, paced)
	gauge(a.rate, rate)
	counter(a.delayed, float64(p.Delayed))
	counter(a.delay, p.DelayTotal.Seconds())
	io := a.io()
	counter(a.pacedTime, io.MemTablesPaced.Seconds(), "memtables")
	counter(a.pacedTime, io.L0Paced.Seconds(), "l0")
	gauge(a.overload, io.Overload)
}
