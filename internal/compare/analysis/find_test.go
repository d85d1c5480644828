package analysis

// findIn is a's first finding of kind about workload (false: none).
func findIn(a *Analysis, kind Kind, workload string) (Finding, bool) {
	for _, f := range a.Findings {
		if f.Kind == kind && f.Workload == workload {
			return f, true
		}
	}
	return Finding{}, false
}

// kindsIn are a's findings of kind, in order.
func kindsIn(a *Analysis, kind Kind) []Finding {
	var out []Finding
	for _, f := range a.Findings {
		if f.Kind == kind {
			out = append(out, f)
		}
	}
	return out
}
