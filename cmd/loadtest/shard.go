package main

import (
	"flag"
	"time"

	"github.com/kvpool/kvpool/internal/loadgen/schedule"
)

// addShard: attack's part of one schedule that several loader hosts send
// together, from an instant they agree on.
func (o *options) addShard(fs *flag.FlagSet) {
	c := &o.cfg
	fs.Var(parsedFlag[schedule.Shard]{&c.Shard, schedule.ParseShard, schedule.Shard.String}, "shard", "send shard `K/N` of one schedule, counted from 1 (1/3, 2/3, 3/3): of the requests one loader at the whole -rate would send, "+
		"every N-th from the K-th, each at its time in that schedule; -rate stays the whole rate; needs -start-at; loadtest merge of the N runs is the whole")
	fs.Var(parsedFlag[time.Time]{&c.StartAt, schedule.ParseStartAt, schedule.StartAtText}, "start-at", "start the schedule at the instant `TIME`, after connecting: RFC 3339 (2026-11-24T12:00:00Z, "+
		"fractional seconds allowed) or Unix seconds (1795003200, 1795003200.25); the shards of one schedule give the same")
}
