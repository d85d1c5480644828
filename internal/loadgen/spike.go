package loadgen

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

// spikeForm ends every error about -spike: what is accepted.
const spikeForm = "want RATE:LENGTH or FACTORx:LENGTH[@START], such as 2x:10s or 30000:10s@20s"

// ParseSpike reads -spike: "FACTORx:LENGTH" (2x:10s: twice -rate for
// 10 s) or "RATE:LENGTH" (30000:10s: 30,000 req/s for 10 s), either
// with an optional "@START" (2x:10s@20s: from 20 s after the start).
// Without "@" At is 0, for the caller to fill with its default start.
func ParseSpike(s string) (Spike, error) {
	bad := func(why string) (Spike, error) {
		if why != "" {
			why += "; "
		}
		return Spike{}, fmt.Errorf("-spike %q: %s%s", s, why, spikeForm)
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

// validate checks a spike of a run at rate (req/s, 0: closed loop) that
// lasts d, by engine: it needs a schedule to raise, ours, and must end
// within the run.
func (s Spike) validate(rate float64, d time.Duration, engine string) error {
	switch {
	case s.IsZero():
		return nil
	case rate <= 0:
		return fmt.Errorf("-spike %s needs the open model (-rate above 0): a closed loop has no schedule to raise", s)
	case engine != EngineFast:
		return fmt.Errorf("-spike %s needs -engine %s: vegeta's attacker paces one constant rate for the whole run", s, EngineFast)
	case (s.Factor > 0) == (s.Rate > 0):
		return fmt.Errorf("-spike: give either a factor or a rate above 0; %s", spikeForm)
	case s.Length <= 0 || s.At < 0:
		return fmt.Errorf("-spike %s: the length must be positive and the start not negative; %s", s, spikeForm)
	case s.At+s.Length > d:
		return fmt.Errorf("-spike %s starts at %v and lasts %v, ending at %v, past -duration %v; start it earlier (-spike-at or @START), shorten it, or lengthen the run",
			s, s.At, s.Length, s.At+s.Length, d)
	}
	return nil
}

// rateOver is the whole schedule's rate during the spike, over a run at
// base req/s.
func (s Spike) rateOver(base float64) float64 {
	if s.Factor > 0 {
		return s.Factor * base
	}
	return s.Rate
}

// SpikeRate is the whole schedule's rate during the run's spike, req/s;
// 0 where there is none.
func (c *Config) SpikeRate() float64 {
	if c.Spike.IsZero() {
		return 0
	}
	return c.Spike.rateOver(c.Rate)
}

// averageRate is the whole schedule's rate averaged over Duration: Rate
// where there is no spike.
func (c *Config) averageRate() float64 {
	if c.Spike.IsZero() || c.Rate <= 0 || c.Duration <= 0 {
		return c.Rate
	}
	l := min(c.Spike.Length, c.Duration).Seconds()
	return (c.Rate*(c.Duration.Seconds()-l) + c.SpikeRate()*l) / c.Duration.Seconds()
}

// peakRate is this loader's share of the highest rate its schedule asks,
// req/s: what its loops must be able to send (see loopsFor); AskedRate
// where there is no spike, and for a closed loop 0.
func (c *Config) peakRate() float64 {
	if c.Spike.IsZero() || c.Rate <= 0 {
		return c.AskedRate()
	}
	return c.share(max(c.Rate, c.SpikeRate()))
}

// askedRateOver is this loader's share of the rate its schedule asks
// on average from from to to after the start, req/s (0: closed loop):
// what a progress line compares the rate of the last stretch with, so
// that the stretch the spike falls in is compared with it.
func (c *Config) askedRateOver(from, to time.Duration) float64 {
	from = max(from, 0)
	if c.Spike.IsZero() || c.Rate <= 0 || to <= from {
		return c.AskedRate() // -rate's share, or 0
	}
	in := min(to, c.Spike.At+c.Spike.Length) - max(from, c.Spike.At)
	in = max(in, 0)
	return c.share((c.Rate*float64(to-from-in) + c.SpikeRate()*float64(in)) / float64(to-from))
}
