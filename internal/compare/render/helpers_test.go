package render

import (
	"github.com/kvpool/kvpool/internal/compare/analysis"
	"github.com/kvpool/kvpool/internal/compare/result"
)

// Render writes the report of the comparison in dir again from its
// compare.json, as the CLI's -render does.
func Render(dir string) (*result.Comparison, *Report, error) {
	c, err := result.Load(dir)
	if err != nil {
		return nil, nil, err
	}
	r, err := Write(c, analysis.Analyze(c), dir)
	return c, r, err
}

// findIn is a's first finding of kind about workload (false: none).
func findIn(a *analysis.Analysis, kind analysis.Kind, workload string) (analysis.Finding, bool) {
	for _, f := range a.Findings {
		if f.Kind == kind && f.Workload == workload {
			return f, true
		}
	}
	return analysis.Finding{}, false
}

// kindsIn are a's findings of kind, in order.
func kindsIn(a *analysis.Analysis, kind analysis.Kind) []analysis.Finding {
	var out []analysis.Finding
	for _, f := range a.Findings {
		if f.Kind == kind {
			out = append(out, f)
		}
	}
	return out
}
