package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvpool/kvpool/internal/compare"
	"github.com/kvpool/kvpool/internal/compare/plan"
	"github.com/kvpool/kvpool/internal/compare/render"
	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/flagenv"
	"github.com/kvpool/kvpool/internal/loadgen/client"
)

// runCompare is `loadtest compare`: the presets of internal/compare, with
// a flag set of their own (no load flags: each step sets its own).
func runCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := compareFlags{o: plan.DefaultOptions()}
	fs := flag.NewFlagSet("loadtest compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.define(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: loadtest compare [flags]\n\n"+
			"Starts -kvserver once per variant on a fresh copy of a filled store and compares the pools:\n"+
			"saturation, a fixed-rate step at 70%% of direct's saturation, an overload step, profiles, charts\n"+
			"and REPORT.md. Flags also read LOADTEST_<FLAG> (a flag given wins; an empty variable is unset).\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return usageError(err)
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	// Before the environment: -render takes no other flag, and a
	// LOADTEST_* variable set for measuring runs must not count as one.
	if given["render"] || given["publish"] {
		return renderCompare(f.render, f.publish, given, fs.NArg(), stdout, stderr)
	}
	if _, err := flagenv.Apply(fs, envPrefix, os.Getenv); err != nil {
		return usageError(err)
	}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if fs.NArg() > 0 {
		return usageError(fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	o, err := f.options(fs, given)
	if err != nil {
		return usageError(err)
	}
	checked, err := compare.Validate(o)
	if err != nil {
		return usageError(err)
	}
	c, rep, err := compare.Run(ctx, checked, stderr)
	if err != nil {
		return err
	}
	printFindings(stdout, rep)
	switch {
	case c.Interrupted:
		return fmt.Errorf("interrupted; the report of what finished is in %s", c.Dir)
	case len(c.Failures) > 0:
		return fmt.Errorf("%d steps failed (listed in the report): %s", len(c.Failures), c.Dir)
	case len(c.OverloadFailed) > 0:
		return fmt.Errorf("failed the overload checks: %s (see the report's Overload table)", strings.Join(c.OverloadFailed, ", "))
	}
	return nil
}

// compareFlags are what compare's flags fill: the plan's options, where a
// flag sets one as it is, and the flags that become options only once read
// (lists of numbers, step lengths, client flags) or measure nothing.
type compareFlags struct {
	o                       plan.Options
	timeouts, caps, workers listFlag
	overloadFor, pairRound  time.Duration
	closedPairs             int
	clients                 client.Flags // read back as arguments (client.Args)
	render, publish         string
}

// define declares every flag of compare on fs, over f.
func (f *compareFlags) define(fs *flag.FlagSet) {
	o := &f.o
	// What runs.
	fs.StringVar(&o.Preset, "preset", o.Preset, "experiment: "+strings.Join(plan.Presets, " | "))
	fs.StringVar(&o.Kvserver, "kvserver", o.Kvserver, "kvserver binary to start (make build)")
	fs.Var((*listFlag)(&o.Pools), "pools", "pools to compare, comma-separated (default: the preset's; direct, the baseline, always runs; under the metastable and writes presets the default too, under writes the peer too); valid: "+
		strings.Join(slices.Concat(plan.Pools, []string{plan.AutoPool}, plan.Peers), ","))
	fs.Var((*listFlag)(&o.Policies), "policies", "overflow policies of the seeds' grid at -cap 1024 (policies and overload presets), comma-separated, or none; valid: "+strings.Join(plan.Policies, ","))
	fs.Var((*listFlag)(&o.Execs), "execs", "run each queueing variant once per kvserver -exec mode given, comma-separated (default: kvserver's own, no -exec flag); valid: "+strings.Join(plan.Execs, ","))
	fs.Var(&f.timeouts, "queue-timeouts", "policies and overload presets: each queueing pool also at its defaults but for kvserver's -queue-timeout, once per value, comma-separated (10ms,50ms): the sweep that chose its default")
	fs.Var((*listFlag)(&o.Limits), "limits", "adaptive -limit variants on fifo and lifo at their defaults (policies, overload, slow-backend presets), comma-separated, or none (default: all); valid: "+strings.Join(plan.Limits, ","))
	fs.Var(&f.caps, "cap", "queue capacities of the capacity preset (default 32,64,128,256,512,1024)")
	fs.Var(&f.workers, "workers", "worker counts of the slow-backend preset (default 2,8,64)")
	fs.StringVar(&o.Workload, "workload", "", "one workload instead of the preset's, as attack's -workload: get | put | mixed:R | get=G,put=P,delete=D")
	fs.Uint64Var(&o.Keys, "keys", o.Keys, "ids in the filled store (-quick, -preset overload, metastable and writes: 100000)")
	fs.IntVar(&o.ValueSize, "value-size", o.ValueSize, "value size in bytes")
	fs.IntVar(&o.Repeat, "repeat", o.Repeat, "saturation searches per variant, interleaved (every variant's first, then every second, …): median and spread, and each pool's saturation over direct's paired by repeat, which 6 or more bound with a 95 % interval (-preset queues searches the pools only then; with fewer, direct alone, and the paired rounds give the pools' ratios) (-quick, -preset overload: 1); -preset metastable: how often each run is repeated, for the spread of recovery times (1 unless given); -preset writes: how often each variant runs, interleaved (3; -quick 2)")
	fs.DurationVar(&o.SLO, "slo", o.SLO, "a sustained rate keeps its corrected p99 at or below this")
	fs.BoolVar(&o.Quick, "quick", false, "every step short, 100k ids, one repeat, one workload (queues: direct's saturation alone, the pools compared by the paired rounds): minutes, numbers indicative")
	// Where each side runs.
	fs.Func("server-cpus", "CPUs kvserver runs on, a list such as 0-7 or 0,2,4-5 (default: the lower half of this process's CPUs where it has 4 or more, 2 or more for -preset scaling; else shared with the loader); with only this list, the loader gets the rest of the CPUs", cpuList(&o.ServerCPUs))
	fs.Func("loader-cpus", "CPUs the loader runs on, one event loop each, a list such as 8-15 (default: the upper half, as -server-cpus); with only this list, kvserver gets the rest", cpuList(&o.LoaderCPUs))
	fs.BoolVar(&o.Pin, "pin", false, "shorthand for -server-cpus 0 -loader-cpus 1 (not with either)")
	// The load of its steps.
	fs.IntVar(&o.MaxConns, "max-conns", o.MaxConns, "connections the loader may open in an overload step (needs ulimit -n above it)")
	fs.Float64Var(&o.Factor, "factor", 0, "overload step rate as a multiple of direct's saturation (default 2; 10 for -preset overload); -preset metastable: the spike's multiple of its base rate (default 2.5)")
	f.clients.Add(fs) // -preset metastable: one client population instead of the preset's
	fs.IntVar(&o.StoreSlots, "store-slots", 0, fmt.Sprintf("-preset metastable: operations its store stand-in (each -io-delay %v) serves at once, and the lab's pools' -workers, for every client population (default: %d, and each population whose worst second the loader cannot hold there gets a store of fewer slots, sized to the loader's CPUs); fewer make a slower store, whose storms a loader on fewer CPUs can hold", plan.MetaIODelay, plan.MetaIOConcurrency))
	fs.BoolVar(&o.FastStore, "fast-store", false, "-preset metastable: plain Pebble, no store stand-in: kvserver's CPU is its limit, and its storms take a loader on several times kvserver's CPUs to hold")
	fs.Float64Var(&o.Rate, "rate", 0, "take this as direct's saturation (req/s) instead of searching; saturation searches of other variants still run")
	// The writes preset's runs: a read stream and a write flood at once.
	fs.Float64Var(&o.ReadRate, "read-rate", 0, fmt.Sprintf("-preset writes: the read stream's GETs a second, an open model over the filled ids for the whole run (default %d)", plan.WritesReadRate))
	fs.DurationVar(&o.ReadFor, "read-for", 0, fmt.Sprintf("-preset writes: the length of each run, its read stream's (default %v)", plan.WritesDuration))
	fs.DurationVar(&o.FloodAt, "flood-at", 0, fmt.Sprintf("-preset writes: when the write flood starts, from the read stream's start (default %v)", plan.WritesFloodAt))
	fs.DurationVar(&o.FloodFor, "flood-for", 0, fmt.Sprintf("-preset writes: how long the write flood sends (default %v)", plan.WritesFloodFor))
	fs.IntVar(&o.FloodConns, "flood-conns", 0, fmt.Sprintf("-preset writes: the flood's writers, a closed loop of this many connections, each sending its next PUT when the last is answered, %d to %d (default %d)",
		plan.WritesMinConns, plan.WritesMaxConns, plan.WritesFloodConns))
	fs.IntVar(&o.FloodValueSize, "flood-value-size", 0, fmt.Sprintf("-preset writes: the flood's PUT values in bytes, %d to %d (default %d), over twice the filled ids",
		plan.WritesMinValueSize, plan.WritesMaxValueSize, plan.WritesFloodValueSize))
	// Step lengths, over the preset's (or -quick's), and the wait for a
	// quiet machine before each step.
	fs.DurationVar(&f.overloadFor, "overload-duration", 0, "length of the overload step (default 20s; -preset overload 1m; -quick 2s)")
	fs.DurationVar(&f.pairRound, "pair-round", 0, "length of each paired closed-loop round (default 1s); on a noisy machine many short pairs bound tighter intervals than few long ones at the same load")
	fs.IntVar(&f.closedPairs, "closed-pairs", plan.FullPairs, fmt.Sprintf("closed-loop rounds each variant runs paired with direct's, alternating between the two servers, for its throughput and CPU-per-request ratios to direct with a 95 %% interval (%d with -quick; 0: none; fewer than %d bound no interval)", plan.MinPairs, plan.MinPairs))
	fs.DurationVar(&o.QuietWait, "quiet-wait", o.QuietWait, "before a step, wait up to this while other processes keep over 1.5 cores busy (0: do not check; -quick: at most 10s)")
	// The store stand-in of the slow-backend preset.
	fs.DurationVar(&o.IODelay, "io-delay", o.IODelay, "slow-backend: kvserver's -io-delay (every store operation first sleeps this)")
	fs.StringVar(&o.IODelayDist, "io-delay-dist", o.IODelayDist, "slow-backend: fixed | exp")
	// The report.
	fs.StringVar(&o.Out, "out", o.Out, "the report goes to OUT/compare-<UTC time>-<preset>/")
	fs.StringVar(&f.render, "render", "", "measure nothing: write the report in this earlier comparison's folder again (REPORT.md and charts/) with this build's report code, from its compare.json; takes no other flag but -publish")
	fs.StringVar(&f.publish, "publish", "", "with -render RUN: publish RUN's comparison into this folder (compare.json, the report as published, its charts and CPU call graphs; the raw profiles stay in RUN); `make compare-publish` uses it")
}

// options are the plan's options the flags fs was given ask for, the
// lists read; given names the flags set, on the command line or in the
// environment. What the options mean together is compare.Validate's.
func (f *compareFlags) options(fs *flag.FlagSet, given map[string]bool) (plan.Options, error) {
	o := f.o
	for _, l := range []*[]string{&o.Policies, &o.Limits} {
		if len(*l) == 1 && (*l)[0] == "none" {
			*l = []string{} // none: not nil, which is the default
		}
	}
	for _, s := range f.timeouts {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return o, fmt.Errorf("-queue-timeouts %q: want durations of 0s or more, comma-separated (10ms,50ms)", s)
		}
		o.QueueTimeouts = append(o.QueueTimeouts, d)
	}
	var err error
	if given["cap"] {
		o.Caps, err = f.caps.ints("-cap", -1)
	}
	if given["workers"] && err == nil {
		o.Workers, err = f.workers.ints("-workers", 1)
	}
	if err == nil {
		err = refuseForPreset(o.Preset, given)
	}
	switch {
	case err != nil:
		return o, err
	case given["closed-pairs"] && f.closedPairs < 0:
		return o, fmt.Errorf("-closed-pairs %d: want 0 (none) or more", f.closedPairs)
	case given["pair-round"] && f.pairRound <= 0: // 0 would mean the preset's
		return o, fmt.Errorf("-pair-round %v: want a length above 0, such as 1s", f.pairRound)
	}
	o.Clients = client.Args(fs)
	o.ApplyDefaults(given["keys"], given["repeat"])
	// A step length given replaces the preset's (or -quick's) in a Timing
	// of the run's own.
	if f.overloadFor > 0 || given["closed-pairs"] || given["pair-round"] {
		t := o.StepTiming()
		t.Overload, t.PairRound = cmp.Or(f.overloadFor, t.Overload), cmp.Or(f.pairRound, t.PairRound)
		if given["closed-pairs"] {
			t.ClosedPairs = f.closedPairs
		}
		o.Timing = &t
	}
	return o, nil
}

// renderCompare is -render RUN, and -render RUN -publish DEST: it
// measures nothing, and takes no other flag (the report is written with
// the options its run had).
func renderCompare(run, dest string, given map[string]bool, args int, stdout, stderr io.Writer) error {
	switch {
	case run == "":
		return usageError(fmt.Errorf("-publish needs -render RUN, the comparison's folder to publish"))
	case len(given) > 2 || len(given) == 2 && !given["publish"] || args > 0:
		return usageError(fmt.Errorf("-render takes no other flag but -publish, and no argument: the report is written with the options its run had"))
	}
	var rep *render.Report
	var err error
	if dest == "" {
		_, rep, err = compare.Render(run)
	} else {
		_, rep, err = compare.Publish(run, dest)
	}
	if err != nil {
		return err
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}
	printFindings(stdout, rep)
	return nil
}

// printFindings prints a report's findings and where it is.
func printFindings(w io.Writer, rep *render.Report) {
	for _, f := range rep.Findings {
		fmt.Fprintf(w, "- %s\n", f)
	}
	fmt.Fprintf(w, "report: %s\n", rep.Path)
}

// cpuList keeps a CPU list in *p as given, for compare to resolve, once
// cpuset reads it (an empty list included).
func cpuList(p *string) func(string) error {
	return func(v string) error {
		_, err := cpuset.Parse(v)
		if err == nil {
			*p = v
		}
		return err
	}
}

// listFlag is a comma- or space-separated list flag; repeating the flag
// appends. A list given empty stays nil: the preset's default.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		*l = append(*l, f)
	}
	return nil
}

func (l listFlag) ints(flagName string, least int) ([]int, error) {
	var out []int
	for _, s := range l {
		n, err := strconv.Atoi(s)
		if err != nil || n < least {
			return nil, fmt.Errorf("%s %q: want whole numbers of at least %d, comma-separated", flagName, s, least)
		}
		out = append(out, n)
	}
	return out, nil
}
