package result

import (
	"fmt"
	"strings"
)

// FixedStep names the fixed-rate step: its folder, its failures and its
// loader check, which restateBacklogs reads by it.
const FixedStep = "fixed"

// ValidationSuffix ends the step name of a search's validating run in the
// loader's checks: "saturate-2 (validation)".
const ValidationSuffix = " (validation)"

// validatePhase is a validating step's CurvePoint.Phase (saturate's
// PhaseValidate).
const validatePhase = "validate"

// SearchStep names repeat rep's saturation search: its folder, its
// failures and, with ValidationSuffix, its validation's loader check.
func SearchStep(rep int) string {
	return fmt.Sprintf("saturate-%d", rep)
}

// ValidationStep is the loader's step name of repeat rep's validation.
func ValidationStep(rep int) string {
	return SearchStep(rep) + ValidationSuffix
}

// restateBacklogs judges the fixed-rate steps and validations of a
// comparison recorded before LoaderCheck.Backlog as later ones are, from
// what it recorded: a fixed-rate step whose loader sent on schedule but
// whose FixedRun says it fell behind did so by its backlog (the fixed
// step checked the backlog only once the loader had sent on schedule); a
// validation whose search held it kept up, whatever the mean send rate.
// A validation that failed stays as recorded: the record does not say
// whether its backlog grew. Checks that name a backlog are kept.
func (c *Comparison) restateBacklogs() {
	for i := range c.Loader {
		l := &c.Loader[i]
		if l.Backlog != "" {
			continue
		}
		v := c.variant(l.Workload, l.Variant)
		if v == nil {
			continue
		}
		switch {
		case l.Step == FixedStep && l.KeptUp && v.Fixed != nil:
			l.BacklogGrew(v.Fixed.Behind)
		case strings.HasSuffix(l.Step, ValidationSuffix):
			if p := v.lastValidation(l.Step); p != nil && p.Pass {
				l.KeptUp = true
			}
		}
	}
}

// variant is the variant named name of workload wl (nil: none).
func (c *Comparison) variant(wl, name string) *VariantResult {
	for _, w := range c.Workloads {
		if w.Workload != wl {
			continue
		}
		for _, v := range w.Variants {
			if v.Name == name {
				return v
			}
		}
	}
	return nil
}

// lastValidation is the last validating step of v's search whose loader
// check is named step (nil: none recorded): the run the check is of.
func (v *VariantResult) lastValidation(step string) *CurvePoint {
	for _, s := range v.Sat {
		if ValidationStep(s.Repeat) != step {
			continue
		}
		for i := len(s.Curve) - 1; i >= 0; i-- {
			if s.Curve[i].Phase == validatePhase {
				return &s.Curve[i]
			}
		}
	}
	return nil
}
