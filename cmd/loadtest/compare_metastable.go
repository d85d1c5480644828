package main

import "fmt"

// metastableIgnores are the compare flags the metastable preset has no
// use for: it runs no capacity or worker sweep, no overload step and no
// closed loop, and its store stand-in is its own (plan.MetaIODelay).
// The plan refuses the variant lists itself (plan.Options.Validate).
var metastableIgnores = []string{"cap", "workers", "overload-duration", "closed-pairs", "pair-round", "io-delay", "io-delay-dist"}

// refuseForPreset refuses a flag given that preset would ignore.
func refuseForPreset(preset string, given map[string]bool) error {
	if preset != "metastable" {
		return nil
	}
	for _, f := range metastableIgnores {
		if given[f] {
			return fmt.Errorf("-%s does not apply to -preset metastable (its variants, spike and store stand-in are fixed; -factor sets the spike, -repeat repeats each run); leave -%s out", f, f)
		}
	}
	return nil
}
