package result

import (
	"maps"
	"slices"
	"strings"
	"time"
)

// Writes is what the writes preset measured: one run per variant ×
// repetition, each a read stream and a write flood at once against a
// fresh kvserver, with kvserver's store and admission read once an
// interval. Its plan (variants, rates, timing) is Plan.Writes.
type Writes struct {
	// LagTolerance is how late, at p99 over an interval, the loader's own
	// sends of the read stream may be before the interval counts as one
	// the loader fell behind in (saturate.LagTolerance of the SLO).
	LagTolerance time.Duration
	Runs         []*WritesRun
}

// WritesRun is one run: the read stream (an open model at the plan's
// rate, for the whole run) and the flood (a closed loop of PUTs from
// FloodAt for FloodFor), both from the loader, and kvserver's metrics.
type WritesRun struct {
	Variant string // plan.Variant.Name
	Repeat  int
	// Dir is the run's folder, relative to the report: the read stream's
	// files, the flood's in flood/, kvserver's log.
	Dir string
	// FloodStart is when the flood started, FloodEnd when its last answer
	// came, in seconds since the read stream's start (0, 0: no flood ran).
	FloodStart, FloodEnd float64
	Reads, Writes        WritesTotals
	// ReadSeries is the read stream's, WriteSeries the flood's, one point
	// per interval, each point's T since the read stream's start.
	ReadSeries, WriteSeries []WritesPoint
	// Server is kvserver's /metrics read once an interval (WritesMetrics);
	// T since the read stream's start.
	Server []ServerSample `json:",omitempty"`
	// ReadsAsked is the read stream's asked rate, ReadsSendRate what the
	// loader sent, ReadsUnsent what it never sent, ReadConnWaits the
	// attempts that waited for a connection (every one busy on the
	// server): the read stream kept up where it sent 99 % of the rate,
	// all of it, its own sends on time.
	ReadsAsked, ReadsSendRate float64
	ReadsUnsent               int64
	ReadConnWaits             int64 `json:",omitempty"`
	// LoaderCPUs is how many CPUs the loader had; the points'
	// LoaderShare are of these.
	LoaderCPUs int
}

// WritesTotals are one stream's figures over its run: its responses,
// those answered (2xx, 404 on a GET), refused (503) or failed otherwise
// (errors, other statuses), and the corrected p99 of all of them.
type WritesTotals struct {
	Responses, OK, Shed, Failed int64
	P99                         time.Duration
	// Elapsed is from the stream's start to its last answer.
	Elapsed time.Duration
}

// WritesPoint is one interval of a stream: the responses that ended in
// it, those answered, refused (503) and failed otherwise, their
// corrected p99 (0: none), and for the read stream the loader's own send
// lag p99 (of the requests that found a connection free), its sends, and
// the loader's CPU as a share of its CPUs over it (negative: unknown).
type WritesPoint struct {
	T, Length                   float64
	Responses, OK, Shed, Failed int64
	P99                         time.Duration
	Sent                        int64         `json:",omitempty"`
	OwnLagP99                   time.Duration `json:",omitempty"`
	LoaderShare                 float64       `json:",omitempty"`
}

// ServerSample is one read of kvserver's /metrics: each series of
// WritesMetrics it served, keyed by SeriesKey, at T seconds since the
// read stream's start. A metric it does not serve (an older binary, or a
// pool without it) is absent.
type ServerSample struct {
	T      float64
	Values map[string]float64
}

// The metrics of kvserver a writes run reads, by name: Pebble's state and
// write stalls, and the admission's, which only the default serves (and
// only once it admits reads and writes apart); any may be absent.
const (
	MetricWriteStalls       = "kvserver_pebble_write_stalls_total"
	MetricWriteStallSeconds = "kvserver_pebble_write_stall_seconds_total"
	MetricL0Sublevels       = "kvserver_pebble_l0_sublevels"
	// MetricL0CompactSublevels is where the store starts compactions out
	// of L0 (its setting).
	MetricL0CompactSublevels = "kvserver_pebble_l0_compaction_sublevels"
	MetricMemtableBytes      = "kvserver_pebble_memtable_bytes"
	// MetricAdmissionRejected counts refusals by class ("read", "write")
	// and reason; MetricAdmissionQueue is each class's queue depth.
	MetricAdmissionRejected = "kvserver_admission_rejected_total"
	MetricAdmissionQueue    = "kvserver_admission_queue_depth"
	// MetricWritePaced is 1 while writes are paced by the store's health;
	// MetricWriteRate the bytes a second then granted to them (0 when
	// not paced); MetricIOOverload the store's IO overload score (1 or
	// more: writes held to what flushes and compactions absorb).
	MetricWritePaced = "kvserver_admission_write_paced"
	MetricWriteRate  = "kvserver_admission_write_rate_bytes"
	MetricIOOverload = "kvserver_admission_io_overload"
)

// AbsorbedAt is when kvserver's store had absorbed a flood that started
// at floodStart and was last answered at floodEnd (seconds since the read
// stream's start): the first of samples from floodEnd on in which L0 had
// fewer sublevels than the point at which compactions out of it start
// (MetricL0CompactSublevels where kvserver serves it, else one more than
// L0Quiet), or no more than before the flood, compactions out of it
// done. A store that took writes faster than it compacts them pays that
// debt after the flood; the writes counted up to this moment are the rate
// it sustains. Memtables are not waited for: a flush takes a fraction of
// a second, and adds a sublevel that no compaction needs to move. 0 where
// no sample says so: kvserver served no L0 sublevels before the flood, or
// the samples ended first.
func AbsorbedAt(samples []ServerSample, floodStart, floodEnd float64) float64 {
	most := -1.0
	for _, s := range samples {
		if v, ok := s.Values[MetricL0Sublevels]; ok && s.T < floodStart {
			most = max(most, v)
		}
	}
	if most < 0 {
		return 0
	}
	for _, s := range samples {
		v, ok := s.Values[MetricL0Sublevels]
		if !ok || s.T < floodEnd {
			continue
		}
		quiet := float64(L0Quiet)
		if at, ok := s.Values[MetricL0CompactSublevels]; ok && at > 0 {
			quiet = at - 1
		}
		if v <= max(most, quiet) {
			return s.T
		}
	}
	return 0
}

// L0Quiet is the most L0 sublevels at which no compaction out of L0 is
// due where kvserver does not say where it starts them: one under
// Pebble's default (L0CompactionThreshold, 4).
const L0Quiet = 3

// WritesMetrics are the families a writes run reads, in that order.
var WritesMetrics = []string{
	MetricWriteStalls, MetricWriteStallSeconds, MetricL0Sublevels, MetricL0CompactSublevels, MetricMemtableBytes,
	MetricAdmissionRejected, MetricAdmissionQueue, MetricWritePaced, MetricWriteRate, MetricIOOverload,
}

// SeriesKey is how a ServerSample keys one series: its family's name,
// with its labels in Prometheus's text form, sorted by name, where it has
// any: kvserver_admission_rejected_total{class="read",reason="queue"}.
func SeriesKey(name string, labels map[string]string) string {
	if len(labels) == 0 {
		return name
	}
	var pairs []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		pairs = append(pairs, k+`="`+labels[k]+`"`)
	}
	return name + "{" + strings.Join(pairs, ",") + "}"
}

// SeriesOf splits a SeriesKey into its family's name and its labels'
// text ("" where it has none).
func SeriesOf(key string) (name, labels string) {
	name, labels, _ = strings.Cut(key, "{")
	return name, strings.TrimSuffix(labels, "}")
}

// WritesStepPrefix begins the step name of a writes run's loader check
// and failures; the repetition follows.
const WritesStepPrefix = "writes run "
