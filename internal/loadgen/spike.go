package loadgen

import "time"

// Spike raises an open-model run's rate for a while: from At after the
// start, for Length, requests are due at Rate (or, with Factor > 0,
// Factor × Config.Rate) instead of Config.Rate; before and after, at
// Config.Rate. The zero Spike is none.
type Spike struct {
	Factor float64       `json:"factor,omitempty"`
	Rate   float64       `json:"rate,omitempty"`
	At     time.Duration `json:"at_ns,omitempty"`
	Length time.Duration `json:"length_ns,omitempty"`
}

// IsZero reports whether s is no spike.
func (s Spike) IsZero() bool { return s == Spike{} }
