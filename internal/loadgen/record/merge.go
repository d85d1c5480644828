package record

import (
	"slices"

	"github.com/kvpool/kvpool/internal/api"
	"github.com/kvpool/kvpool/internal/latency"
)

// Merge is rs, runs of one load made at the same time from several
// loaders, as one run: the histograms merged (HdrHistogram's Merge, so
// that the percentiles are the whole's, never an average of the
// runs'); counts, rates, connections, event loops, CPU time and CPUs
// summed (peaks too: an upper bound, the peaks need not coincide); from
// the earliest start to the latest end; pinned and telling its own lag
// apart only where every run did; each operation's part alike (none where
// a run kept none). Its config is rs[0]'s, its rate and connections the
// sums. Unpinned and Intervals are the caller's to fill in (the series
// need the runs' interval logs).
func Merge(rs []*Result) *Result {
	m := &Result{Config: rs[0].Config, Start: rs[0].Start, Pinned: true, OwnLagKnown: true,
		Uncorrected: latency.New(), Corrected: latency.New(), SendLag: latency.New(), Codes: map[int]int64{}, Errors: map[string]int64{}}
	m.Config.Rate, m.Config.Conns, m.Config.MaxConns = 0, 0, 0
	ops := map[api.Method]*OpResult{}
	for _, r := range rs {
		m.Corrected.Merge(r.Corrected)
		m.Uncorrected.Merge(r.Uncorrected)
		m.SendLag.Merge(r.SendLag)
		m.Config.Rate += r.Config.Rate
		m.Config.Conns += r.Config.Conns
		m.Config.MaxConns += r.Config.MaxConns
		if !r.Config.Client.IsZero() { // the shards of one schedule share one client model
			m.Config.Client = r.Config.Client
		}
		if r.Start.Before(m.Start) {
			m.Start = r.Start
		}
		m.Planned += r.Planned
		m.Sent += r.Sent
		m.Late += r.Late
		m.ConnWaits += r.ConnWaits
		m.OwnLate += r.OwnLate
		m.OwnLagKnown = m.OwnLagKnown && r.OwnLagKnown
		m.ErrorCount += r.ErrorCount
		m.BytesIn += r.BytesIn
		m.BytesOut += r.BytesOut
		m.ConnsStart += r.ConnsStart
		m.ConnsPeak += r.ConnsPeak
		m.ConnsUsed += r.ConnsUsed
		m.Reconnects += r.Reconnects
		m.InFlightPeak += r.InFlightPeak
		m.Loops += r.Loops
		m.LoaderCPUs += r.LoaderCPUs // over every loader host
		m.Pinned = m.Pinned && r.Pinned
		m.CPU.User += r.CPU.User
		m.CPU.System += r.CPU.System
		addCounts(m.Codes, r.Codes)
		addCounts(m.Errors, r.Errors)
		m.Clients.Add(r.Clients)
		for i := range r.Ops {
			o := &r.Ops[i]
			to := ops[o.Op]
			if to == nil {
				to = &OpResult{Op: o.Op, Uncorrected: latency.New(), Corrected: latency.New(), Codes: map[int]int64{}, Errors: map[string]int64{}}
				ops[o.Op] = to
			}
			to.Corrected.Merge(o.Corrected)
			to.Uncorrected.Merge(o.Uncorrected)
			to.Sent += o.Sent
			to.ErrorCount += o.ErrorCount
			addCounts(to.Codes, o.Codes)
			addCounts(to.Errors, o.Errors)
		}
	}
	for _, r := range rs {
		off := r.Start.Sub(m.Start)
		m.Elapsed = max(m.Elapsed, off+r.Elapsed)
		m.SendSpan = max(m.SendSpan, off+r.SendSpan)
	}
	if slices.ContainsFunc(rs, func(r *Result) bool { return len(r.Ops) == 0 }) {
		return m
	}
	for _, op := range Ops {
		if o := ops[op]; o != nil {
			m.Ops = append(m.Ops, *o)
		}
	}
	return m
}

func addCounts[K comparable](to, from map[K]int64) {
	for k, n := range from {
		to[k] += n
	}
}
