package result

import "fmt"

// FixedStep names the fixed-rate step: its folder, its failures and its
// loader check.
const FixedStep = "fixed"

// ValidationSuffix ends the step name of a search's validating run in the
// loader's checks: "saturate-2 (validation)".
const ValidationSuffix = " (validation)"

// PhaseValidate is a validating step's CurvePoint.Phase (saturate's
// PhaseValidate).
const PhaseValidate = "validate"

// SearchStep names repeat rep's saturation search: its folder, its
// failures and, with ValidationSuffix, its validation's loader check.
func SearchStep(rep int) string {
	return fmt.Sprintf("saturate-%d", rep)
}

// ValidationStep is the loader's step name of repeat rep's validation.
func ValidationStep(rep int) string {
	return SearchStep(rep) + ValidationSuffix
}
