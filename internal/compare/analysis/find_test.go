package analysis

import "slices"

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

// Variant is the workload's variant named name (nil: none).
func (w *Workload) Variant(name string) *Variant {
	if i := slices.IndexFunc(w.Variants, func(v *Variant) bool { return v.Name == name }); i >= 0 {
		return w.Variants[i]
	}
	return nil
}
