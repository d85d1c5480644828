package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Spike raises an open-model run's rate for a while: from At after the
// start, for Length, requests are due at Rate (or, with Factor > 0,
// Factor × Config.Rate) instead of Config.Rate; before and after, at
// Config.Rate. The zero Spike is none.
//
// Rates are the whole schedule's, as Config.Rate is: with -shard or
// several loops each sender takes its share of the spike as of the rest
// of the run, so a spike raises every loop's and every shard's rate at
// the same instant.
type Spike struct {
	Factor float64       `json:"factor,omitempty"`
	Rate   float64       `json:"rate,omitempty"`
	At     time.Duration `json:"at_ns,omitempty"`
	Length time.Duration `json:"length_ns,omitempty"`
}

// IsZero reports whether s is no spike.
func (s Spike) IsZero() bool { return s == Spike{} }

// SpikeForm ends every error about -spike: what is accepted.
const SpikeForm = "want RATE:LENGTH or FACTORx:LENGTH[@START], such as 2x:10s or 30000:10s@20s"

// ParseSpike reads -spike: "FACTORx:LENGTH" (2x:10s: twice -rate for
// 10 s) or "RATE:LENGTH" (30000:10s: 30,000 req/s for 10 s), either
// with an optional "@START" (2x:10s@20s: from 20 s after the start).
// Without "@" At is 0, for the caller to fill with its default start.
func ParseSpike(s string) (Spike, error) {
	bad := func(why string) (Spike, error) {
		if why != "" {
			why += "; "
		}
		return Spike{}, fmt.Errorf("-spike %q: %s%s", s, why, SpikeForm)
	}
	text := strings.TrimSpace(s)
	level, rest, ok := strings.Cut(text, ":")
	if !ok {
		return bad("")
	}
	length, at, hasAt := strings.Cut(rest, "@")
	var sp Spike
	num, isFactor := strings.CutSuffix(strings.ToLower(level), "x")
	v, err := strconv.ParseFloat(num, 64)
	switch {
	case err != nil || num == "":
		return bad("")
	case v <= 0 || v != v || v > 1e15: // v != v: NaN
		return bad("the rate or factor must be above 0")
	case isFactor:
		sp.Factor = v
	default:
		sp.Rate = v
	}
	if sp.Length, err = time.ParseDuration(length); err != nil {
		return bad("")
	}
	if sp.Length <= 0 {
		return bad("the length must be positive")
	}
	if hasAt {
		if sp.At, err = time.ParseDuration(at); err != nil {
			return bad("")
		}
		if sp.At < 0 {
			return bad("the start must not be negative")
		}
	}
	return sp, nil
}

// String is the -spike form of s ("2x:10s@20s"); "" for no spike.
func (s Spike) String() string {
	if s.IsZero() {
		return ""
	}
	level := strconv.FormatFloat(s.Rate, 'f', -1, 64)
	if s.Factor > 0 {
		level = strconv.FormatFloat(s.Factor, 'f', -1, 64) + "x"
	}
	return fmt.Sprintf("%s:%v@%v", level, s.Length, s.At)
}

// RateOver is the whole schedule's rate during the spike, over a run at
// base req/s.
func (s Spike) RateOver(base float64) float64 {
	if s.Factor > 0 {
		return s.Factor * base
	}
	return s.Rate
}
