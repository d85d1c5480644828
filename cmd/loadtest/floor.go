package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/compare"
	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/loadgen/report"
	"github.com/kvpool/kvpool/internal/ratio"
)

// runFloor is `loadtest floor`: the bare fasthttp handler and kvserver
// direct on the same CPUs, in interleaved paired rounds of a closed loop
// (or a rate both sustain), for kvserver's CPU per request and throughput
// as a multiple of the floor's with a 95 % interval (compare.Floor).
func runFloor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFloor(args, stderr)
	if err != nil {
		return err
	}
	if o.Out != "" {
		if err := report.PrepareDir(o.Out); err != nil {
			return err
		}
	}
	_, err = compare.Floor(ctx, o, stdout, stderr)
	return err
}

func parseFloor(args []string, stderr io.Writer) (plan.Floor, error) {
	o := plan.Floor{Rounds: 6, Round: 4 * time.Second, Warmup: time.Second, Conns: 64, Keys: 100_000, ValueSize: 500, IdleWithin: 30 * time.Second}
	fs := flag.NewFlagSet("loadtest floor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Kvserver, "kvserver", "bin/kvserver", "kvserver binary to measure (make build); it runs -pool direct")
	kvArgs := fs.String("args", "", "more kvserver flags, space-separated (\"-cache-mb 128\")")
	fs.StringVar(&o.Base, "base", plan.FloorBare, "what kvserver is measured against: bare (loadtest bare-server, the fasthttp handler that does no work) or another kvserver binary (before/after a change)")
	baseArgs := fs.String("base-args", "", "flags of a kvserver -base, space-separated (default: -args)")
	serverCPUs := fs.String("server-cpus", "0", "CPUs both servers run on, a list such as 0 or 0-7")
	var cpuCounts listFlag
	fs.Var(&cpuCounts, "cpu-counts", "server CPU counts to run in turn, increasing, such as 1,2,4,8: the first n of -server-cpus each, then each server's throughput scaling from the first count (default: all of -server-cpus, once)")
	loaderCPUs := fs.String("loader-cpus", "", "CPUs the loader runs on, one event loop each, such as 1 or 8-15 (default: every other CPU this process may use)")
	fs.IntVar(&o.Rounds, "rounds", o.Rounds, fmt.Sprintf("paired rounds per workload and store state, which goes first alternating (%d or more bound a 95 %% interval)", ratio.MinPairs))
	fs.DurationVar(&o.Round, "round", o.Round, "length of each server's run in a round")
	fs.DurationVar(&o.Warmup, "warmup", o.Warmup, "an unmeasured run of each server before a workload's rounds (0: none)")
	fs.IntVar(&o.Conns, "conns", o.Conns, "connections: in a closed loop each sends its next request when answered")
	fs.Float64Var(&o.Rate, "rate", 0, "requests per second sent to each server in each round, open loop, over -conns (0: a closed loop, as fast as each answers). "+
		"At a rate both sustain, the two are compared at one load with the loader's CPU to spare: a request's CPU depends on the load, and in a closed loop the slower server runs at a lower one")
	fs.Uint64Var(&o.Keys, "keys", o.Keys, "ids filled before the rounds and asked for (100000 x 500 B fit kvserver's 64 MiB memtable)")
	fs.IntVar(&o.ValueSize, "value-size", o.ValueSize, "bytes per value (fill and PUT)")
	workloads := fs.String("workloads", "get,put", "comma-separated: get, put")
	fs.StringVar(&o.ProfileDir, "profile", "", "after each workload's rounds, one more kvserver round with its CPU profile saved in this folder (floor-STATE-WORKLOAD.pprof; go tool pprof reads it); not measured")
	fs.StringVar(&o.Out, "out", "", "new or empty `directory` for floor.json, REPORT.md with the tables printed here (loadtest compare -render writes it again from floor.json) and each round's loader files under runs/ (default: none)")
	states := fs.String("states", plan.FloorFresh+","+plan.FloorCompacted, "store states, comma-separated: fresh (the fill still in the memtable), compacted (flushed and compacted into sstables at start)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: loadtest floor [flags]\n\n"+
			"Runs the bare fasthttp handler (or -base) and kvserver -pool direct on -server-cpus, the loader on\n"+
			"-loader-cpus, in interleaved paired rounds (closed loop, or -rate), and prints each server's CPU per request\n"+
			"(from /proc) and throughput, and kvserver/base for both with a 95 %% interval.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, usageError(err)
	}
	if fs.NArg() > 0 {
		return o, usageError(fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	o.Args = strings.Fields(*kvArgs)
	o.BaseArgs = o.Args
	if *baseArgs != "" {
		o.BaseArgs = strings.Fields(*baseArgs)
	}
	var perr error
	if o.ServerCPUs, perr = cpuset.Parse(*serverCPUs); perr != nil {
		return o, usageError(fmt.Errorf("-server-cpus: %w", perr))
	}
	if *loaderCPUs != "" {
		if o.LoaderCPUs, perr = cpuset.Parse(*loaderCPUs); perr != nil {
			return o, usageError(fmt.Errorf("-loader-cpus: %w", perr))
		}
	} else {
		aff, err := cpuset.Affinity()
		if err != nil {
			return o, fmt.Errorf("cannot read this process's CPUs: %w; give -loader-cpus", err)
		}
		o.LoaderCPUs = aff.Minus(o.ServerCPUs)
	}
	if err := o.Validate(); err != nil {
		return o, usageError(err)
	}
	var err error
	if o.Workloads, err = listOf(*workloads, "-workloads", "get", "put"); err != nil {
		return o, usageError(err)
	}
	if o.States, err = listOf(*states, "-states", plan.FloorFresh, plan.FloorCompacted); err != nil {
		return o, usageError(err)
	}
	if o.CPUCounts, err = cpuCounts.ints("-cpu-counts", 1); err != nil {
		return o, usageError(err)
	}
	if slices.Sort(o.CPUCounts); len(o.CPUCounts) > 0 && slices.Max(o.CPUCounts) > o.ServerCPUs.Len() {
		return o, usageError(fmt.Errorf("-cpu-counts %v: -server-cpus has %d CPUs", cpuCounts, o.ServerCPUs.Len()))
	}
	o.CPUCounts = slices.Compact(o.CPUCounts)
	if o.Rate > 0 && len(o.CPUCounts) > 1 {
		return o, usageError(fmt.Errorf("-rate with -cpu-counts %v: scaling is each server's closed-loop throughput; measure it without -rate", cpuCounts))
	}
	if o.Self, err = os.Executable(); err != nil && o.Base == plan.FloorBare {
		return o, fmt.Errorf("cannot find this binary to start bare-server with: %w", err)
	}
	return o, nil
}

// listOf parses a comma-separated list of the valid names, in the order
// given, each once.
func listOf(text, flagName string, valid ...string) ([]string, error) {
	var out []string
	for _, s := range strings.Split(text, ",") {
		s = strings.TrimSpace(s)
		if !slices.Contains(valid, s) {
			return nil, fmt.Errorf("%s: %q is not one of %s", flagName, s, strings.Join(valid, ", "))
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}
