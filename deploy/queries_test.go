package deploy

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"testing"

	"github.com/kvpool/kvpool/deploy/dashboard"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rulesFile is kvserver's alert rules, relative to this package.
const rulesFile = "prometheus/kvserver-rules.yml"

// targetLabels are the labels Prometheus attaches to every series it
// scrapes: a query may use them although /metrics does not carry them.
var targetLabels = map[string]bool{"instance": true, "job": true}

// exported is what a kvserver's /metrics holds, as Prometheus stores it:
// the label sets of each series name, a histogram's _bucket (with le),
// _sum and _count and a summary's quantiles, _sum and _count apart.
type exported map[string][]map[string]string

func exportedSeries(mfs map[string]*dto.MetricFamily) exported {
	ex := exported{}
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			ls := map[string]string{}
			for _, l := range m.GetLabel() {
				ls[l.GetName()] = l.GetValue()
			}
			with := func(k, v string) map[string]string {
				c := map[string]string{k: v}
				for lk, lv := range ls {
					c[lk] = lv
				}
				return c
			}
			switch mf.GetType() {
			case dto.MetricType_HISTOGRAM:
				for _, b := range m.GetHistogram().GetBucket() {
					ex[name+"_bucket"] = append(ex[name+"_bucket"], with("le", fmt.Sprint(b.GetUpperBound())))
				}
				ex[name+"_bucket"] = append(ex[name+"_bucket"], with("le", "+Inf"))
				ex[name+"_sum"] = append(ex[name+"_sum"], ls)
				ex[name+"_count"] = append(ex[name+"_count"], ls)
			case dto.MetricType_SUMMARY:
				for _, q := range m.GetSummary().GetQuantile() {
					ex[name] = append(ex[name], with("quantile", fmt.Sprint(q.GetQuantile())))
				}
				ex[name+"_sum"] = append(ex[name+"_sum"], ls)
				ex[name+"_count"] = append(ex[name+"_count"], ls)
			default:
				ex[name] = append(ex[name], ls)
			}
		}
	}
	return ex
}

// check parses expr with Prometheus' parser and returns what in it a live
// kvserver (ex) would not answer: a selector that matches no exported
// series, or a grouping label that none of the series it groups carries.
func (ex exported) check(p parser.Parser, expr string) error {
	e, err := p.ParseExpr(expr)
	if err != nil {
		return fmt.Errorf("does not parse: %w", err)
	}
	var errs []error
	parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
		switch n := node.(type) {
		case *parser.VectorSelector:
			if err := ex.selects(n.LabelMatchers); err != nil {
				errs = append(errs, err)
			}
		case *parser.AggregateExpr:
			for _, l := range n.Grouping {
				if !targetLabels[l] && !ex.carries(n.Expr, l) {
					errs = append(errs, fmt.Errorf("groups by %q, which no series under %s carries", l, n.Expr))
				}
			}
		}
		return nil
	})
	return errors.Join(errs...)
}

// selects says whether some exported series matches all of ms, target
// labels aside.
func (ex exported) selects(ms []*labels.Matcher) error {
	var name string
	var rest []*labels.Matcher
	for _, m := range ms {
		switch {
		case m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual:
			name = m.Value
		case targetLabels[m.Name]:
		default:
			rest = append(rest, m)
		}
	}
	if name == "" {
		return fmt.Errorf("selector %v names no metric", ms)
	}
	series, ok := ex[name]
	if !ok {
		return fmt.Errorf("%s is not exported by kvserver", name)
	}
	for _, ls := range series {
		if !slices.ContainsFunc(rest, func(m *labels.Matcher) bool { return !m.Matches(ls[m.Name]) }) {
			return nil
		}
	}
	return fmt.Errorf("no series of %s matches %v (exported: %v)", name, rest, series)
}

// carries says whether a series that e selects has label l.
func (ex exported) carries(e parser.Expr, l string) bool {
	for _, ms := range parser.ExtractSelectors(e) {
		for _, m := range ms {
			if m.Name != model.MetricNameLabel || m.Type != labels.MatchEqual {
				continue
			}
			for _, ls := range ex[m.Value] {
				if _, ok := ls[l]; ok {
					return true
				}
			}
		}
	}
	return false
}

// labelValues is Grafana's template variable query label_values(series, label).
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*(\w+)\)$`)

// checkQuery checks a dashboard query as Grafana sends it, its variables
// expanded, or a variable's label_values query.
func (ex exported) checkQuery(p parser.Parser, q dashboard.Query) error {
	if m := labelValues.FindStringSubmatch(q.Expr); m != nil {
		if !targetLabels[m[2]] {
			return fmt.Errorf("label_values of %q, not a target label", m[2])
		}
		return ex.check(p, m[1])
	}
	return ex.check(p, dashboard.Expand(q.Expr, "1m"))
}

func loadRules(t *testing.T) []rulefmt.Rule {
	t.Helper()
	groups, errs := rulefmt.ParseFile(rulesFile, false, model.UTF8Validation, parser.NewParser(parser.Options{}), slog.New(slog.DiscardHandler))
	require.Empty(t, errs, "%s fails Prometheus' rule checker", rulesFile)
	var rules []rulefmt.Rule
	for _, g := range groups.Groups {
		rules = append(rules, g.Rules...)
	}
	require.NotEmpty(t, rules)
	return rules
}

// Every query of the dashboard and every rule selects series that a live
// kvserver exports, with the labels and label values it uses.
func TestQueriesSelectExportedSeries(t *testing.T) {
	kv := startKVServer(t)
	kv.exercise(t, 1)
	ex := exportedSeries(kv.families(t))
	p := parser.NewParser(parser.Options{})

	queries, err := dashboard.Queries()
	require.NoError(t, err)
	for _, q := range queries {
		assert.NoError(t, ex.checkQuery(p, q), "dashboard panel %q: %s", q.Panel, q.Expr)
	}
	for _, r := range loadRules(t) {
		assert.NoError(t, ex.check(p, r.Expr), "rule %s: %s", r.Alert+r.Record, r.Expr)
	}
}

// The check itself catches what it is for: a misspelt name, a label or a
// label value kvserver does not export, grouping by an absent label.
func TestCheckRejectsWhatKVServerLacks(t *testing.T) {
	ex := exported{
		"kvserver_http_requests_total":                  {{"method": "GET", "code": "200"}, {"method": "PUT", "code": "503"}},
		"kvserver_http_request_duration_seconds_bucket": {{"method": "GET", "le": "0.1"}},
	}
	p := parser.NewParser(parser.Options{})
	f := func(expr, wantErr string) {
		t.Helper()
		err := ex.check(p, expr)
		if wantErr == "" {
			assert.NoError(t, err, expr)
			return
		}
		if assert.Error(t, err, expr) {
			assert.Contains(t, err.Error(), wantErr, expr)
		}
	}
	f(`sum by (code) (rate(kvserver_http_requests_total{instance=~".+", code="503"}[1m]))`, "")
	f(`histogram_quantile(0.99, sum by (method, le) (rate(kvserver_http_request_duration_seconds_bucket[1m])))`, "")
	f(`rate(kvserver_http_request_total[1m])`, "kvserver_http_request_total is not exported")
	f(`kvserver_http_requests_total{code="418"}`, "no series of kvserver_http_requests_total matches")
	f(`kvserver_http_requests_total{method="GET", code="503"}`, "no series")
	f(`kvserver_http_requests_total{reason="full"}`, "no series")
	f(`sum by (reason) (kvserver_http_requests_total)`, `groups by "reason"`)
	f(`sum(rate(kvserver_http_requests_total[1m])`, "does not parse")
}
