package main

import (
	"flag"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/loadgen/schedule"
)

// addShard: attack's part of one schedule that several loader hosts send
// together, from an instant they agree on.
func (o *options) addShard(fs *flag.FlagSet) {
	c := &o.cfg
	fs.Var(parsedFlag[schedule.Shard]{&c.Shard, schedule.ParseShard, schedule.Shard.String}, "shard", "send shard `K/N` of one schedule, counted from 1 (1/3, 2/3, 3/3): of the requests one loader at the whole -rate would send, "+
		"every N-th from the K-th, each at its time in that schedule; -rate stays the whole rate; needs -start-at; loadtest merge of the N runs is the whole")
	fs.Var(parsedFlag[time.Time]{&c.StartAt, parseStartAt, startAtText}, "start-at", "start the schedule at the instant `TIME`, after connecting: RFC 3339 (2026-11-24T12:00:00Z, "+
		"fractional seconds allowed) or Unix seconds (1795003200, 1795003200.25); the shards of one schedule give the same")
}

func startAtText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// startAtForm is what -start-at accepts.
const startAtForm = "want an instant in RFC 3339 (2026-11-24T12:00:00Z, 2026-11-24T13:00:00.250+01:00) or Unix seconds (1795003200, 1795003200.25)"

var unixSeconds = regexp.MustCompile(`^(\d+)(?:\.(\d{1,9}))?$`)

// parseStartAt reads an RFC 3339 instant, with or without fractional
// seconds, or Unix seconds, with up to nine decimals (read exactly, not
// through a float).
func parseStartAt(s string) (time.Time, error) {
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

// shardName is the part of a run's folder name that says which shard it
// is: "-shard2of4"; "" for a run of its own.
func shardName(sh schedule.Shard) string {
	if sh.IsWhole() {
		return ""
	}
	return fmt.Sprintf("-shard%dof%d", sh.K, sh.N)
}
