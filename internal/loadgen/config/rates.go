package config

import (
	"fmt"
	"time"

	"github.com/kvpool/kvpool/internal/loadgen/schedule"
)

// Schedule is the whole run's timetable of c (open model).
func (c *Config) Schedule() schedule.Schedule { return schedule.WithSpike(c.Rate, c.Spike) }

// AskedRate is the rate this loader offers: Rate, or its shard's share
// of it (Rate/N); 0 for a closed loop. With a Spike it is the average
// over Duration of the rate the schedule asks (Rate before and after the
// spike, its rate during it), so that the achieved rate of a run that
// kept to its schedule, Planned over Duration, matches it: the rate to
// judge a run by, not the rate at any one moment (see PeakRate).
func (c *Config) AskedRate() float64 {
	return c.share(c.averageRate())
}

// share is this loader's part of a rate of the whole schedule.
func (c *Config) share(rate float64) float64 {
	if c.Shard.IsWhole() {
		return rate
	}
	return rate / float64(c.Shard.N)
}

// validateSpike checks spike s of a run at rate (req/s, 0: closed loop)
// that lasts d, by engine: it needs a schedule to raise, ours, and must
// end within the run.
func validateSpike(s schedule.Spike, rate float64, d time.Duration, engine string) error {
	switch {
	case s.IsZero():
		return nil
	case rate <= 0:
		return fmt.Errorf("-spike %s needs the open model (-rate above 0): a closed loop has no schedule to raise", s)
	case engine != EngineFast:
		return fmt.Errorf("-spike %s needs -engine %s: vegeta's attacker paces one constant rate for the whole run", s, EngineFast)
	case (s.Factor > 0) == (s.Rate > 0):
		return fmt.Errorf("-spike: give either a factor or a rate above 0; %s", schedule.SpikeForm)
	case s.Length <= 0 || s.At < 0:
		return fmt.Errorf("-spike %s: the length must be positive and the start not negative; %s", s, schedule.SpikeForm)
	case s.At+s.Length > d:
		return fmt.Errorf("-spike %s starts at %v and lasts %v, ending at %v, past -duration %v; start it earlier (-spike-at or @START), shorten it, or lengthen the run",
			s, s.At, s.Length, s.At+s.Length, d)
	}
	return nil
}

// SpikeRate is the whole schedule's rate during the run's spike, req/s;
// 0 where there is none.
func (c *Config) SpikeRate() float64 {
	if c.Spike.IsZero() {
		return 0
	}
	return c.Spike.RateOver(c.Rate)
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

// PeakRate is this loader's share of the highest rate its schedule asks,
// req/s: what its loops must be able to send (see loopsFor); AskedRate
// where there is no spike, and for a closed loop 0.
func (c *Config) PeakRate() float64 {
	if c.Spike.IsZero() || c.Rate <= 0 {
		return c.AskedRate()
	}
	return c.share(max(c.Rate, c.SpikeRate()))
}

// AskedRateOver is this loader's share of the rate its schedule asks
// on average from from to to after the start, req/s (0: closed loop):
// what a progress line compares the rate of the last stretch with, so
// that the stretch the spike falls in is compared with it.
func (c *Config) AskedRateOver(from, to time.Duration) float64 {
	from = max(from, 0)
	if c.Spike.IsZero() || c.Rate <= 0 || to <= from {
		return c.AskedRate() // -rate's share, or 0
	}
	in := min(to, c.Spike.At+c.Spike.Length) - max(from, c.Spike.At)
	in = max(in, 0)
	return c.share((c.Rate*float64(to-from-in) + c.SpikeRate()*float64(in)) / float64(to-from))
}
