package limit

import (
	"math"
	"math/rand/v2"
)

// vegasProbeMultiplier is VegasLimit's probeMultiplier: rtt_noload is
// re-measured every jitter·30·limit windows, jitter drawn from [0.5, 1).
const vegasProbeMultiplier = 30

// vegas is Netflix's VegasLimit (concurrency-limits-core,
// limit/VegasLimit.java), the library's default, fed one window at a time.
// TCP Vegas's idea: the queue the limit builds is limit·(1 − noload/rtt);
// keep it between alpha and beta.
//
//	probe: every jitter·30·⌊est⌋ windows, noload = this window's rtt, no
//	       change (so a lasting rise in latency becomes the new no-load
//	       rtt instead of keeping the limit down for ever)
//	rtt < noload, or no noload yet: noload = rtt, no change
//	L = max(1, ⌊log10 ⌊est⌋⌋); alpha 3L, beta 6L, threshold L
//	queue = ⌈est·(1 − noload/rtt)⌉
//	dropped:               new = est − L
//	else inflight·2 < est: no change (the caller is the limit)
//	else queue <= threshold: new = est + beta (no queueing: grow fast)
//	     queue < alpha:      new = est + L
//	     queue > beta:       new = est − L
//	     else                no change
//	est = (1−s)·est + s·clamp(new, Min, Max); the limit is ⌊est⌋
//
// The source clamps to [1, max]; here Min is the floor. Smoothing s is
// 1 by default, as the source. Growth without queueing: +6 a window below
// 100, +12 below 1000: from 8 to 1000 in under 100 windows (1 s at 10 ms).
// A lasting rise in rtt shrinks it by L a window (−3 from 1000, −2 from
// 999, −1 from 99: from 100 to 10 in 89 windows), until the probe takes the
// new rtt as noload.
type vegas struct {
	est         float64
	noload      float64 // ns; 0 until the first window
	probeCount  int
	probeJitter float64
	rand        *rand.Rand
	min, max    float64
	smoothing   float64
}

func newVegas(cfg Config) *vegas {
	v := &vegas{
		est:       float64(cfg.Initial),
		min:       float64(cfg.Min),
		max:       float64(cfg.Max),
		smoothing: cfg.Smoothing,
		// A fixed seed: the jitter only spreads probes across limits, and a
		// seeded source keeps a run reproducible.
		rand: rand.New(rand.NewPCG(0x5eed, uint64(cfg.Initial))),
	}
	v.resetProbe()
	return v
}

func (v *vegas) resetProbe() {
	v.probeJitter = 0.5 + v.rand.Float64()/2
	v.probeCount = 0
}

// log10Root is the source's Log10RootIntFunction: max(1, ⌊log10 n⌋).
func log10Root(n int) int {
	l := 0
	for ; n >= 10; n /= 10 {
		l++
	}
	return max(1, l)
}

func (v *vegas) update(a aggregate) int {
	rtt := float64(a.rtt)
	v.probeCount++
	if v.probeJitter*vegasProbeMultiplier*v.est <= float64(v.probeCount) {
		v.resetProbe()
		v.noload = rtt
		return int(v.est)
	}
	if v.noload == 0 || rtt < v.noload {
		v.noload = rtt
		return int(v.est)
	}

	l := log10Root(int(v.est))
	queue := int(math.Ceil(v.est * (1 - v.noload/rtt)))
	var next float64
	switch {
	case a.dropped:
		next = v.est - float64(l)
	case float64(a.inflight*2) < v.est:
		return int(v.est)
	case queue <= l:
		next = v.est + float64(6*l)
	case queue < 3*l:
		next = v.est + float64(l)
	case queue > 6*l:
		next = v.est - float64(l)
	default:
		return int(v.est)
	}
	next = min(max(next, v.min), v.max)
	v.est = (1-v.smoothing)*v.est + v.smoothing*next
	return int(v.est)
}
