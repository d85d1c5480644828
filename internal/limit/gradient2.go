package limit

import "math"

// gradient2 is Netflix's Gradient2Limit (concurrency-limits-core,
// limit/Gradient2Limit.java), fed one window at a time:
//
//	long     = exponential average of the windows' rtts (ExpAvgMeasurement:
//	           the plain mean of the first 10, then factor 2/(LongWindow+1)),
//	           multiplied by 0.95 after any window where long/short > 2, so
//	           that it comes down fast once an overload has passed;
//	if inflight < est/2: no change (the caller, not the server, is the limit)
//	gradient = clamp(Tolerance · long/short, 0.5, 1)
//	new      = est · gradient + queue
//	est      = clamp(est·(1−s) + new·s, Min, Max), and the limit is ⌊est⌋
//
// where short is the window's rtt and queue is QueueSize, or max(4,
// ⌊√⌊est⌋⌋) by default (GradientLimit's SquareRootFunction.create(4)).
//
// Growth: while latency holds (gradient 1) est gains s·queue a window; with
// the default queue ⌊√est⌋ grows by ~s/2 a window, so est goes from
// Initial to Max in about (2/s)(√Max − √Initial) windows, a little more
// for the rounding: under 300 windows (3 s at 10 ms) from 20 to 1000,
// under 125 from 8 to 200, at s = 0.2.
//
// Shrinking: while short > 2·Tolerance·long the gradient is at its floor
// and est loses s/2 of itself a window (10 % at s = 0.2), towards the fixed
// point 2·queue (8 by default) or Min: after a 10× rise in rtt, from 1000
// to 20 in under 50 windows. A rise that lasts becomes the baseline as long
// catches up: with the default LongWindow (600) the limit is back at Max
// ~500 windows later.
type gradient2 struct {
	est       float64
	long      expAvg
	min, max  float64
	smoothing float64
	tolerance float64
	queueSize int // 0: max(4, ⌊√⌊est⌋⌋)
}

func newGradient2(cfg Config) *gradient2 {
	return &gradient2{
		est:       float64(cfg.Initial),
		long:      expAvg{factor: 2 / (float64(cfg.LongWindow) + 1), warmup: 10},
		min:       float64(cfg.Min),
		max:       float64(cfg.Max),
		smoothing: cfg.Smoothing,
		tolerance: cfg.Tolerance,
		queueSize: cfg.QueueSize,
	}
}

func (g *gradient2) queue() float64 {
	if g.queueSize > 0 {
		return float64(g.queueSize)
	}
	return max(4, math.Floor(math.Sqrt(math.Floor(g.est))))
}

func (g *gradient2) update(a aggregate) int {
	queue := g.queue()
	short := float64(a.rtt)
	long := g.long.add(short)
	if long/short > 2 {
		g.long.value *= 0.95
	}
	if float64(a.inflight) < g.est/2 {
		return int(g.est)
	}
	gradient := min(max(g.tolerance*long/short, 0.5), 1)
	next := g.est*gradient + queue
	next = g.est*(1-g.smoothing) + next*g.smoothing
	g.est = min(max(next, g.min), g.max)
	return int(g.est)
}

// expAvg is ExpAvgMeasurement: the plain mean of the first warmup values,
// then an exponential average with the given factor.
type expAvg struct {
	value, sum float64
	factor     float64
	warmup, n  int
}

func (e *expAvg) add(v float64) float64 {
	if e.n < e.warmup {
		e.n++
		e.sum += v
		e.value = e.sum / float64(e.n)
	} else {
		e.value = e.value*(1-e.factor) + v*e.factor
	}
	return e.value
}
