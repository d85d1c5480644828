package schedule

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
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
	return sh, sh.Validate()
}

func (s Shard) Validate() error {
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

// Share is the run's requests shard s sends.
func (s Shard) Share() Share {
	if s.IsWhole() {
		return WholeRun
	}
	return Share{First: uint64(s.K - 1), Stride: uint64(s.N)}
}

// StartAtText is -start-at as ParseStartAt reads it back; "" for none.
func StartAtText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// startAtForm is what -start-at accepts.
const startAtForm = "want an instant in RFC 3339 (2026-11-24T12:00:00Z, 2026-11-24T13:00:00.250+01:00) or Unix seconds (1795003200, 1795003200.25)"

var unixSeconds = regexp.MustCompile(`^(\d+)(?:\.(\d{1,9}))?$`)

// ParseStartAt reads an RFC 3339 instant, with or without fractional
// seconds, or Unix seconds, with up to nine decimals (read exactly, not
// through a float).
func ParseStartAt(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if m := unixSeconds.FindStringSubmatch(s); m != nil {
		sec, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("%q: %s", s, startAtForm)
		}
		var ns int64
		if m[2] != "" {
			ns, _ = strconv.ParseInt(m[2]+strings.Repeat("0", 9-len(m[2])), 10, 64)
		}
		return time.Unix(sec, ns), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q: %s", s, startAtForm)
	}
	return t, nil
}

// FolderName is the part of a run's folder name that says which shard it
// is: "-shard2of4"; "" for a run of its own.
func (sh Shard) FolderName() string {
	if sh.IsWhole() {
		return ""
	}
	return fmt.Sprintf("-shard%dof%d", sh.K, sh.N)
}
