package compare

import (
	"context"
	"time"

	"github.com/kvpool/kvpool/internal/compare/result"
)

// pairRounds runs n pairs of rounds, each pair's two back to back in
// result.PairOrder and every round pauseLen after the one before (0: at
// once), so that whatever drifts on the machine between pairs cancels
// inside each pair's ratio. round measures side 0 or 1 in pair i (from
// 1), false where it could not (the runner recorded why, or ctx ended);
// each sees every pair once both of its rounds ran. false: a round did
// not run.
func pairRounds(ctx context.Context, n int, pauseLen time.Duration, round func(i, side int) (result.ClosedRound, bool), each func(i int, pair [2]result.ClosedRound)) bool {
	for i := 1; i <= n; i++ {
		var pair [2]result.ClosedRound
		for k, side := range result.PairOrder(i) {
			if pauseLen > 0 && (i > 1 || k > 0) && !pause(ctx, pauseLen) {
				return false
			}
			var ok bool
			if pair[side], ok = round(i, side); !ok {
				return false
			}
		}
		each(i, pair)
	}
	return true
}
