package verdict

import "slices"

// RSSSample is one reading of the server's resident set size.
type RSSSample struct {
	// Seconds since any fixed origin (the start of the step, say).
	Seconds float64
	// Bytes resident.
	Bytes int64
}

// RSSGrowth summarises the RSS of an overload step.
type RSSGrowth struct {
	// MiBPerS is the least-squares slope of RSS against time over the
	// second half of the samples, in MiB per second; 0 when it cannot be
	// computed (fewer than two distinct times).
	MiBPerS float64
	// SteadyMiB is the median RSS over the second half (the lower middle
	// value for an even count).
	SteadyMiB float64
}

const mib = 1 << 20

// Growth applies the RSS rules to samples taken during the overload, in
// time order: the second half is samples[n/2:] (for an odd n the middle
// sample belongs to it); steady is the median of that half, growth its
// least-squares slope.
func Growth(samples []RSSSample) RSSGrowth {
	var g RSSGrowth
	half := samples[len(samples)/2:]
	if len(half) == 0 {
		return g
	}
	vals := make([]float64, len(half))
	var mx, my float64
	for i, s := range half {
		vals[i] = float64(s.Bytes) / mib
		mx += s.Seconds
		my += vals[i]
	}
	mx /= float64(len(half))
	my /= float64(len(half))
	// Centred sums: the slope of samples taken at large offsets (Unix
	// seconds) would otherwise drown in rounding.
	if slices.ContainsFunc(half, func(s RSSSample) bool { return s.Seconds != half[0].Seconds }) {
		var sxy, sxx float64
		for i, s := range half {
			dx := s.Seconds - mx
			sxy += dx * (vals[i] - my)
			sxx += dx * dx
		}
		g.MiBPerS = sxy / sxx
	}
	slices.Sort(vals)
	g.SteadyMiB = vals[(len(vals)+1)/2-1]
	return g
}
