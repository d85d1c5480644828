package main

// writesIgnores are the compare flags the writes preset has no use for:
// it runs no saturation search, sweep, overload step or closed loop (its
// rates are its own, -read-rate and the flood's closed loop), and plain
// Pebble. The plan refuses the variant lists and the other presets'
// stores itself (plan.Options.Validate).
var writesIgnores = []string{"cap", "workers", "overload-duration", "closed-pairs", "pair-round", "io-delay", "io-delay-dist", "factor", "rate", "max-conns"}
