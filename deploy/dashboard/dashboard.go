// Package dashboard defines kvserver's Grafana dashboard in Go (with the
// Grafana Foundation SDK) and renders it: as the JSON Grafana imports, and
// as an SVG picture of its panel grid for the documentation. The committed
// files deploy/grafana/kvserver.json and docs/observability-dashboard.svg
// are its output (make dashboard); a test keeps them equal to it.
//
// It names kvserver's metrics as strings and imports none of the server's
// packages: deploy's tests check every name and label against a live
// kvserver instead.
package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// UID is the dashboard's Grafana UID: fixed, so that an import replaces
// the previous version instead of adding a copy.
const UID = "kvserver"

// Grafana expands these in a query before it reaches Prometheus; a check
// that parses a query itself must substitute them first (Expand).
const (
	// InstanceVar selects the kvserver targets shown (a regex, "All" is .*).
	InstanceVar = "$instance"
	// RateInterval is Grafana's range for rate(): at least four scrape
	// intervals of the data source.
	RateInterval = "$__rate_interval"
)

// inst is the label matcher every query starts from.
const inst = `instance=~"` + InstanceVar + `"`

// A query is one PromQL expression of a panel and its legend.
type query struct {
	expr, legend string
}

// A panel is one time series panel: width in grid columns (of 24).
type panel struct {
	title, description, unit string
	width                    uint32
	queries                  []query
}

// A row is a titled group of panels, laid out left to right.
type row struct {
	title  string
	panels []panel
}

// panelHeight is every panel's height in grid units (30 px each).
const panelHeight = 8

func rate(series string) string {
	return "rate(" + series + "[" + RateInterval + "])"
}

// sel is a selector of metric name restricted to the chosen instances,
// with extra matchers (`code="503"`) if any.
func sel(name string, matchers ...string) string {
	s := name + "{" + inst
	for _, m := range matchers {
		s += ", " + m
	}
	return s + "}"
}

// quantile is the q-quantile of a histogram's rate, kept apart by the
// labels in by (le is added).
func quantile(q, histogram, by string) string {
	group := "le"
	if by != "" {
		group = by + ", le"
	}
	return fmt.Sprintf("histogram_quantile(%s, sum by (%s) (%s))", q, group, rate(sel(histogram+"_bucket")))
}

// rows is the dashboard's content, top to bottom. Every series named here
// is one kvserver exports today (deploy's tests check it).
func rows() []row {
	requests := "kvserver_http_requests_total"
	return []row{{
		title: "Requests",
		panels: []panel{{
			title: "Request rate by code", unit: "reqps", width: 8,
			description: "Answers per second by HTTP status; 503 is shed load (see the Admission row for why).",
			queries:     []query{{"sum by (code) (" + rate(sel(requests)) + ")", "{{code}}"}},
		}, {
			title: "Request rate by method", unit: "reqps", width: 8,
			description: "Answers per second by method; unknown: answered before the request's headers were read.",
			queries:     []query{{"sum by (method) (" + rate(sel(requests)) + ")", "{{method}}"}},
		}, {
			title: "Latency by method (p50, p99)", unit: "s", width: 8,
			description: "Handler time to a ready response; answers given outside the handler are not timed.",
			queries: []query{
				{quantile("0.5", "kvserver_http_request_duration_seconds", "method"), "p50 {{method}}"},
				{quantile("0.99", "kvserver_http_request_duration_seconds", "method"), "p99 {{method}}"},
			},
		}},
	}, {
		title: "Admission",
		panels: []panel{{
			title: "Pool queue length", unit: "short", width: 6,
			description: "Requests waiting in the pool's queue for a slot.",
			queries:     []query{{"sum by (pool) (" + sel("kvserver_pool_queue_depth") + ")", "{{pool}}"}},
		}, {
			title: "Pool queue wait (p50, p99)", unit: "s", width: 6,
			description: "How long requests waited for a slot; near the clients' timeout, their retries add load the server cannot serve.",
			queries: []query{
				{quantile("0.5", "kvserver_pool_queue_wait_seconds", "pool"), "p50 {{pool}}"},
				{quantile("0.99", "kvserver_pool_queue_wait_seconds", "pool"), "p99 {{pool}}"},
			},
		}, {
			title: "Running vs limit", unit: "short", width: 6,
			description: "Requests running now against the number allowed at once (-workers, or the adaptive -limit) and the worker count.",
			queries: []query{
				{"sum by (pool) (" + sel("kvserver_pool_busy_workers") + ")", "running {{pool}}"},
				{"sum by (pool) (" + sel("kvserver_pool_limit") + ")", "limit {{pool}}"},
				{"sum by (pool) (" + sel("kvserver_pool_workers") + ")", "workers {{pool}}"},
			},
		}, {
			title: "Shed by reason", unit: "reqps", width: 6,
			description: "Requests the pool answered 503 without running them, by reason (every reason the server reports appears).",
			queries:     []query{{"sum by (reason) (" + rate(sel("kvserver_pool_rejected_total")) + ")", "{{reason}}"}},
		}, {
			title: "Deadlines", unit: "reqps", width: 12,
			description: "Requests with X-Request-Timeout-Ms; those dropped unrun once it passed (by stage); those run to the end " +
				"after it (wasted work); those whose client closed the connection while queued (abandoned).",
			queries: []query{
				{"sum(" + rate(sel("kvserver_deadline_requests_total")) + ")", "with a deadline"},
				{"sum by (stage) (" + rate(sel("kvserver_deadline_dropped_total")) + ")", "dropped at {{stage}}"},
				{"sum(" + rate(sel("kvserver_deadline_wasted_total")) + ")", "wasted (ran past it)"},
				{"sum(" + rate(sel("kvserver_pool_rejected_total", `reason="abandoned"`)) + ")", "abandoned"},
			},
		}, {
			title: "Work for clients that had left", unit: "percentunit", width: 12,
			description: "Share of answered requests whose store operation finished after the client's deadline, and share dropped " +
				"for a passed deadline or a closed connection: work spent on, or saved from, clients no longer waiting.",
			queries: []query{
				{"sum(" + rate(sel("kvserver_deadline_wasted_total")) + ") / sum(" + rate(sel(requests)) + ")", "wasted"},
				{"(sum(" + rate(sel("kvserver_deadline_dropped_total")) + ") + sum(" +
					rate(sel("kvserver_pool_rejected_total", `reason="abandoned"`)) + ")) / sum(" + rate(sel(requests)) + ")", "dropped"},
			},
		}},
	}, {
		title: "Reads and writes (the default pool)",
		panels: []panel{{
			title: "Shed by class", unit: "reqps", width: 6,
			description: "The default pool (auto) admits reads (GET) and writes (PUT, DELETE) apart: 503s per second by class " +
				"and reason; io is a write the store could not absorb in time while writes were paced.",
			queries: []query{{"sum by (class, reason) (" + rate(sel("kvserver_admission_rejected_total")) + ") > 0", "{{class}} {{reason}}"}},
		}, {
			title: "Queued and limit by class", unit: "short", width: 6,
			description: "Requests waiting for a slot of their class, and how many each class lets run at once (its adaptive limit).",
			queries: []query{
				{"sum by (class) (" + sel("kvserver_admission_queue_depth") + ")", "queued {{class}}"},
				{"sum by (class) (" + sel("kvserver_admission_limit") + ")", "limit {{class}}"},
			},
		}, {
			title: "Write pacing", unit: "Bps", width: 6,
			description: "While the store's flushes or compactions fall behind, writes are held to the byte rate they absorb " +
				"(the paced rate; absent while writes are free), beside what reaches the write-ahead log.",
			queries: []query{
				{"max(" + sel("kvserver_admission_write_rate_bytes") + ") > 0", "paced rate"},
				{"sum(" + rate(sel("kvserver_pebble_wal_bytes_written_total")) + ")", "written (WAL)"},
			},
		}, {
			title: "Store IO overload", unit: "percentunit", width: 6,
			description: "How close Pebble is to holding every write back (100 %: a write stall), and the share of time writes " +
				"were paced, by the queue that set the pace (memtables waiting for a flush, or a deep L0).",
			queries: []query{
				{"max(" + sel("kvserver_admission_io_overload") + ")", "overload"},
				{"sum by (cause) (" + rate(sel("kvserver_admission_write_paced_seconds_total")) + ")", "paced by {{cause}}"},
			},
		}},
	}, {
		title: "Store",
		panels: []panel{{
			title: "Store operations in flight and waiting", unit: "short", width: 8,
			description: "Only with -io-concurrency > 0: operations holding a slot, waiting for one, and the slots.",
			queries: []query{
				{"sum(" + sel("kvserver_io_in_progress") + ")", "in flight"},
				{"sum(" + sel("kvserver_io_waiting") + ")", "waiting"},
				{"sum(" + sel("kvserver_io_concurrency") + ")", "slots"},
			},
		}, {
			title: "Store io wait (p99)", unit: "s", width: 8,
			description: "Only with -io-concurrency > 0: how long store operations waited for a slot.",
			queries:     []query{{quantile("0.99", "kvserver_io_wait_seconds", ""), "p99"}},
		}, {
			title: "Block cache hit rate", unit: "percentunit", width: 8,
			description: "Pebble block cache hits over lookups.",
			queries: []query{{"sum(" + rate(sel("kvserver_pebble_block_cache_hits_total")) + ") / (sum(" +
				rate(sel("kvserver_pebble_block_cache_hits_total")) + ") + sum(" + rate(sel("kvserver_pebble_block_cache_misses_total")) + "))", "hit rate"}},
		}, {
			title: "Pebble read amplification", unit: "short", width: 8,
			description: "Levels and sublevels a point read may consult; L0 sublevels climbing means writes outpace compaction, and at the stall point Pebble holds every write back.",
			queries: []query{
				{"max(" + sel("kvserver_pebble_read_amplification") + ")", "read amplification"},
				{"max(" + sel("kvserver_pebble_l0_sublevels") + ")", "L0 sublevels"},
				{"min(" + sel("kvserver_pebble_l0_stall_sublevels") + ")", "L0 stall point"},
			},
		}, {
			title: "Compactions, flushes, write stalls", unit: "ops", width: 8,
			description: "Pebble compactions and memtable flushes completed per second, and write stalls begun: Pebble holding every write back because writes outran flushes or compactions (kvserver's log names the reason).",
			queries: []query{
				{"sum(" + rate(sel("kvserver_pebble_compactions_total")) + ")", "compactions"},
				{"sum(" + rate(sel("kvserver_pebble_flushes_total")) + ")", "flushes"},
				{"sum(" + rate(sel("kvserver_pebble_write_stalls_total")) + ")", "write stalls"},
			},
		}, {
			title: "Compaction debt", unit: "bytes", width: 8,
			description: "Bytes compaction still has to write, by Pebble's estimate.",
			queries:     []query{{"max(" + sel("kvserver_pebble_compaction_debt_bytes") + ")", "debt"}},
		}},
	}, {
		title: "Go runtime",
		panels: []panel{{
			title: "CPU", unit: "short", width: 6,
			description: "CPU seconds the process used per second (1 is one core busy).",
			queries:     []query{{"sum by (instance) (" + rate(sel("process_cpu_seconds_total")) + ")", "{{instance}}"}},
		}, {
			title: "Goroutines", unit: "short", width: 6,
			description: "Goroutines: fasthttp gives every open connection one.",
			queries:     []query{{"sum by (instance) (" + sel("go_goroutines") + ")", "{{instance}}"}},
		}, {
			title: "GC", unit: "s", width: 6,
			description: "The longest stop-the-world pause of the recent collections, and the time paused per second.",
			queries: []query{
				{"max by (instance) (" + sel("go_gc_duration_seconds", `quantile="1"`) + ")", "max pause {{instance}}"},
				{"sum by (instance) (" + rate(sel("go_gc_duration_seconds_sum")) + ")", "paused, s per s {{instance}}"},
			},
		}, {
			title: "Heap", unit: "bytes", width: 6,
			description: "Live heap, the heap size that triggers the next collection, and the resident set.",
			queries: []query{
				{"sum by (instance) (" + sel("go_memstats_heap_alloc_bytes") + ")", "heap in use {{instance}}"},
				{"sum by (instance) (" + sel("go_memstats_next_gc_bytes") + ")", "next GC at {{instance}}"},
				{"sum by (instance) (" + sel("process_resident_memory_bytes") + ")", "resident {{instance}}"},
			},
		}},
	}}
}

// Build returns the dashboard as the SDK's model, panels placed on the grid.
//
// It is the classic dashboard model (schemaVersion 42), which the SDK marks
// deprecated in favour of dashboardv2: every Grafana imports the classic
// JSON, while v2 imports only into a Grafana (12 or later) serving the v2
// dashboard API.
//
//lint:ignore SA1019 the classic model is the one every Grafana imports (above)
func Build() (dashboard.Dashboard, error) {
	ds := common.DataSourceRef{Type: ptr("prometheus"), Uid: ptr("${datasource}")}
	//lint:ignore SA1019 as for Build's result
	b := dashboard.NewDashboardBuilder("kvserver").
		Uid(UID).
		Description("kvserver: requests, admission (pool, shedding, deadlines), the store and the Go runtime. Generated by deploy/dashboard; do not edit the JSON.").
		Tags([]string{"kvserver"}).
		Refresh("10s").
		Time("now-30m", "now").
		Timezone(common.TimeZoneBrowser).
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").Label("Data source").Type("prometheus")).
		WithVariable(dashboard.NewQueryVariableBuilder("instance").
			Label("Instance").
			Datasource(ds).
			Query(dashboard.StringOrMap{String: ptr("label_values(kvserver_config_info, instance)")}).
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
			Multi(true).
			IncludeAll(true).
			AllValue(allInstances))
	// Grafana wants panel ids unique within the dashboard; numbering them
	// in order keeps the JSON stable from one generation to the next.
	var id uint32
	next := func() uint32 { id++; return id }
	for _, r := range rows() {
		b = b.WithRow(dashboard.NewRowBuilder(r.title).Id(next()))
		for _, p := range r.panels {
			tp := timeseries.NewPanelBuilder().
				Id(next()).
				Title(p.title).
				Description(p.description).
				Datasource(ds).
				Unit(p.unit).
				Min(0).
				Span(p.width).
				Height(panelHeight).
				FillOpacity(10).
				Legend(common.NewVizLegendOptionsBuilder().
					DisplayMode(common.LegendDisplayModeList).
					Placement(common.LegendPlacementBottom).
					ShowLegend(true))
			for i, q := range p.queries {
				tp = tp.WithTarget(prometheus.NewDataqueryBuilder().
					Datasource(ds).
					RefId(string(rune('A' + i))).
					Expr(q.expr).
					LegendFormat(q.legend))
			}
			b = b.WithPanel(tp)
		}
	}
	return b.Build()
}

// JSON is the dashboard as Grafana imports it, indented, ending in a newline.
func JSON() ([]byte, error) {
	d, err := Build()
	if err != nil {
		return nil, fmt.Errorf("cannot build the dashboard: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return nil, fmt.Errorf("cannot encode the dashboard: %w", err)
	}
	return buf.Bytes(), nil
}

// A Query is one PromQL expression of the dashboard, as Grafana sends it
// before expanding variables, and the panel it belongs to.
type Query struct {
	Panel, Expr string
}

// Queries returns every query of the dashboard, its template variable's
// included, in the order they appear.
func Queries() ([]Query, error) {
	d, err := Build()
	if err != nil {
		return nil, err
	}
	qs := []Query{}
	for _, v := range d.Templating.List {
		if v.Type == "query" && v.Query != nil && v.Query.String != nil { // a datasource variable's query is a plugin id
			qs = append(qs, Query{Panel: "variable " + v.Name, Expr: *v.Query.String})
		}
	}
	for _, p := range d.Panels {
		if p.Panel == nil {
			continue
		}
		for _, t := range p.Panel.Targets {
			pq, ok := t.(prometheus.Dataquery)
			if !ok {
				return nil, fmt.Errorf("panel %q has a %T query, not a Prometheus one", deref(p.Panel.Title), t)
			}
			qs = append(qs, Query{Panel: deref(p.Panel.Title), Expr: pq.Expr})
		}
	}
	return qs, nil
}

func ptr[T any](v T) *T { return &v }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// allInstances is what $instance becomes with All chosen (its AllValue).
const allInstances = ".*"

// Expand substitutes what Grafana substitutes in a query before sending it
// to Prometheus: All for $instance, and rateInterval for $__rate_interval.
func Expand(expr, rateInterval string) string {
	return strings.NewReplacer(InstanceVar, allInstances, RateInterval, rateInterval).Replace(expr)
}
