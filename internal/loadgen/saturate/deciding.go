package saturate

// This file says which steps of a search decided its bracket, and what
// of a step's series its verdict was judged on: what a reader needs to
// see whether a failure was one stall or the whole step.

// Decided tells whether s is one of the runs that decided b: at b.Lo a
// run that held (its search step, the re-test that held where the first
// run failed, and the validating run), at b.Hi a run that failed (the
// failure and its failed re-test; a failed validation and its re-test
// where a validation set Hi). A run at either end with the other outcome
// decided nothing: the first failure of a rate that then held, or the
// short step that held at a rate whose validation failed. Lo and Hi are
// the rates steps asked (never grid points standing in for one), so the
// comparison is exact; an end that is 0 (not found) matches no step.
func (b Bracket) Decided(s *Step) bool {
	switch {
	case s.Asked <= 0:
		return false
	case s.Asked == b.Lo:
		return s.Pass
	case s.Asked == b.Hi:
		return !s.Pass
	}
	return false
}

// JudgedSeconds are s's judged intervals, in order, the warm-up and the
// drain after the schedule left out, each as judge saw it: the last
// one's P99 is the larger of its own and the drain's (whose responses
// are judged with it), so that a point reads as its verdict; its Rate
// and counts stay its own. Nil before s is judged.
func (s *Step) JudgedSeconds() []Second {
	var out []Second
	last := -1
	for _, p := range s.Seconds {
		switch p.Verdict {
		case "", verdictWarmUp:
			continue
		case verdictDrain:
			if last >= 0 {
				out[last].P99 = max(out[last].P99, p.P99)
			}
			continue
		}
		out = append(out, p)
		last = len(out) - 1
	}
	return out
}

// Held tells whether p, judged, met the SLO and the error limit (an
// interval with nothing answered and nothing waiting did). False for the
// warm-up and the drain, which are not judged on their own.
func (p Second) Held() bool { return p.Verdict == verdictOK }
