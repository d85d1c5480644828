package loadgen

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is one loader's part of a schedule that several loader hosts
// send together (-shard K/N): of the requests one loader at the whole
// Config.Rate would send, shard K (1-based, 1 ≤ K ≤ N, as jest's
// --shard=1/3 counts) sends the run's seq K-1, K-1+N, K-1+2N, …, each at
// its time in the whole schedule, from the instant Config.StartAt that
// the N shards agree on. The zero Shard is the whole schedule (as 1/1).
type Shard struct {
	K int `json:"k"`
	N int `json:"n"`
}

// shardForm ends every error about -shard: what is accepted.
const shardForm = "want K/N with 1 ≤ K ≤ N, shards counted from 1 (as jest --shard=1/3), e.g. -shard 2/4"

// ParseShard reads "K/N".
func ParseShard(s string) (Shard, error) {
	kText, nText, ok := strings.Cut(strings.TrimSpace(s), "/")
	k, kerr := strconv.Atoi(kText)
	n, nerr := strconv.Atoi(nText)
	if !ok || kerr != nil || nerr != nil {
		return Shard{}, fmt.Errorf("-shard %q: %s", s, shardForm)
	}
	sh := Shard{K: k, N: n}
	return sh, sh.validate()
}

func (s Shard) validate() error {
	switch {
	case s == Shard{}:
		return nil
	case s.N < 1:
		return fmt.Errorf("-shard %s: N must be at least 1; %s", s, shardForm)
	case s.K < 1 || s.K > s.N:
		return fmt.Errorf("-shard %s: K must be in 1..%d; %s", s, s.N, shardForm)
	}
	return nil
}

// IsWhole reports whether s is the whole schedule (zero, or 1/1).
func (s Shard) IsWhole() bool { return s.N <= 1 }

// String is "K/N"; "" for the zero Shard.
func (s Shard) String() string {
	if s == (Shard{}) {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.K, s.N)
}

// share is the run's requests shard s sends.
func (s Shard) share() share {
	if s.IsWhole() {
		return wholeRun
	}
	return share{first: uint64(s.K - 1), stride: uint64(s.N)}
}

// AskedRate is the rate this loader offers: Rate, or its shard's share
// of it (Rate/N); 0 for a closed loop. With a Spike it is the average
// over Duration of the rate the schedule asks (Rate before and after the
// spike, its rate during it), so that the achieved rate of a run that
// kept to its schedule, Planned over Duration, matches it: the rate to
// judge a run by, not the rate at any one moment (see peakRate).
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
