package main

import "fmt"

// metastableIgnores are the compare flags the metastable preset has no
// use for: it runs no capacity or worker sweep, no overload step and no
// closed loop, and its store stand-in is its own (plan.MetaIODelay).
// The plan refuses the variant lists itself (plan.Options.Validate).
var metastableIgnores = []string{"cap", "workers", "overload-duration", "closed-pairs", "pair-round", "io-delay", "io-delay-dist"}

// refuseForPreset refuses a flag given that preset would ignore.
func refuseForPreset(preset string, given map[string]bool) error {
	ignores, why := metastableIgnores, "its variants, spike and store stand-in are fixed; -factor sets the spike, -repeat repeats each run"
	switch preset {
	case "metastable":
	case "writes":
		ignores, why = writesIgnores, "it runs no search and no step but its read stream and flood, whose flags are -read-rate, -read-for, -flood-at, -flood-for, -flood-conns and -flood-value-size; -repeat repeats each run"
	default:
		return nil
	}
	for _, f := range ignores {
		if given[f] {
			return fmt.Errorf("-%s does not apply to -preset %s (%s); leave -%s out", f, preset, why, f)
		}
	}
	return nil
}
