package limit

import "time"

// aimd is Netflix's AIMDLimit (concurrency-limits-core,
// limit/AIMDLimit.java), fed one window at a time: loss-based, it ignores
// latency below Timeout.
//
//	dropped, or rtt > Timeout: limit = ⌊limit · Backoff⌋
//	else inflight·2 >= limit:  limit + 1
//	else                       no change (the caller is the limit)
//	clamped to [Min, Max]
//
// Growth is one a window: Max − Initial windows to reach Max (100 a
// second at 10 ms windows: slow by design, as TCP's congestion avoidance).
// A backoff takes 10 % (at 0.9) a window: from 1000 to 8 in 42 windows.
type aimd struct {
	limit    int
	min, max int
	backoff  float64
	timeout  time.Duration
}

func newAIMD(cfg Config) *aimd {
	return &aimd{limit: cfg.Initial, min: cfg.Min, max: cfg.Max, backoff: cfg.Backoff, timeout: cfg.Timeout}
}

func (m *aimd) update(a aggregate) int {
	switch {
	case a.dropped || a.rtt > m.timeout:
		m.limit = int(float64(m.limit) * m.backoff)
	case a.inflight*2 >= m.limit:
		m.limit++
	}
	m.limit = min(max(m.limit, m.min), m.max)
	return m.limit
}
