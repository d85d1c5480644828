package saturate

import (
	"math"
	"slices"
	"time"
)

// simServer is a deterministic server for the search's tests: a FIFO
// queue served as a fluid at Capacity requests per second, each answer
// Base after its service, fed by a perfect loader (every request sent on
// time, connections unbounded). Time is the simulation's own, advanced
// in slices of simSlice: no clock, no sleep, the same series every time.
//
// Stalls stop the service for a while within one call of measure (by its
// index, counting from 0): the server's GC pause, a noisy neighbour.
// From DegradeAfter into any run (0: never) the capacity is Degraded: a
// server that sustains less over a long run than over a short step.
type simServer struct {
	Capacity     float64
	Base         time.Duration
	DegradeAfter time.Duration
	Degraded     float64
	Stalls       map[int][]simStall
	// Interval is the series' interval (the search's Config.Interval).
	Interval time.Duration

	calls []simCall
}

type simStall struct{ At, For time.Duration }

type simCall struct {
	Phase  string
	Rate   float64
	Length time.Duration
}

const simSlice = 5 * time.Millisecond

// measure simulates one step at rate for length and returns its series,
// as loadgen's collector cuts a real run: latencies and answers by end
// time, sends by send time, in flight at each interval's end.
func (m *simServer) measure(phase string, rate float64, length time.Duration) (Step, error) {
	call := len(m.calls)
	m.calls = append(m.calls, simCall{phase, rate, length})
	dt := simSlice.Seconds()
	arriving := int(length / simSlice)
	perSlice := rate * dt

	capacity := func(j int) float64 {
		t := time.Duration(j) * simSlice
		for _, s := range m.Stalls[call] {
			if t >= s.At && t < s.At+s.For {
				return 0
			}
		}
		if m.DegradeAfter > 0 && t >= m.DegradeAfter {
			return m.Degraded * dt
		}
		return m.Capacity * dt
	}
	// Cumulative departures at the end of each slice, until the queue is
	// empty after the last arrival (or a minute past it).
	var departed []float64
	queue, total := 0.0, 0.0
	for j := 0; j < arriving || queue > 1e-9; j++ {
		if j >= arriving+int(time.Minute/simSlice) {
			break
		}
		if j < arriving {
			queue += perSlice
		}
		served := math.Min(queue, capacity(j))
		queue -= served
		total += served
		departed = append(departed, total)
	}
	// Each slice's arrivals leave when the departures reach the middle of
	// them (FIFO), interpolated within the slice.
	answers := make([]simAnswer, 0, arriving)
	j := 0
	for i := range arriving {
		pos := (float64(i) + 0.5) * perSlice
		for j < len(departed)-1 && departed[j] < pos {
			j++
		}
		prev := 0.0
		if j > 0 {
			prev = departed[j-1]
		}
		f := 1.0
		if departed[j] > prev {
			f = math.Min(1, math.Max(0, (pos-prev)/(departed[j]-prev)))
		}
		leave := (float64(j) + f) * dt
		arrive := (float64(i) + 0.5) * dt
		lat := leave - arrive + m.Base.Seconds()
		answers = append(answers, simAnswer{end: arrive + lat, latency: lat, weight: perSlice})
	}

	iv := m.Interval.Seconds()
	n := 0
	for _, a := range answers {
		n = max(n, int(a.end/iv)+1)
	}
	n = max(n, int(length/m.Interval))
	s := Step{Asked: rate, Length: length, Sent: rate, LoaderCPUShare: -1, LoaderCPUs: 1, ServerCPUShare: -1}
	byInterval := make([][]simAnswer, n)
	for _, a := range answers {
		k := int(a.end / iv)
		byInterval[k] = append(byInterval[k], a)
	}
	var sentSoFar, endedSoFar float64
	for k := range n {
		start, end := float64(k)*iv, float64(k+1)*iv
		p := Second{T: start, Length: iv, LoaderCPUShare: -1, ServerCPUShare: -1}
		sent := math.Max(0, math.Min(end, length.Seconds())-math.Min(start, length.Seconds())) * rate
		sentSoFar += sent
		p.Sent = int64(math.Round(sent))
		as := byInterval[k]
		slices.SortFunc(as, func(a, b simAnswer) int { return cmpFloat(a.latency, b.latency) })
		var w float64
		for _, a := range as {
			w += a.weight
		}
		endedSoFar += w
		p.Answered = int64(math.Round(w))
		p.Rate = w / iv
		p.P50, p.P99 = weightedQuantile(as, w, 0.50), weightedQuantile(as, w, 0.99)
		p.InFlight = int64(math.Round(sentSoFar - endedSoFar))
		s.Seconds = append(s.Seconds, p)
	}
	return s, nil
}

// simAnswer is one slice's arrivals as answered: when (s since the
// step's start), after how long (corrected, s), and how many.
type simAnswer struct{ end, latency, weight float64 }

// weightedQuantile is the q quantile of as, sorted by latency, of total
// weight.
func weightedQuantile(as []simAnswer, total, q float64) time.Duration {
	var acc float64
	for _, a := range as {
		acc += a.weight
		if acc >= q*total-1e-9 {
			return time.Duration(a.latency * float64(time.Second))
		}
	}
	return 0
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
