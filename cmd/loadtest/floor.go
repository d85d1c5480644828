package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/kvpool/kvpool/internal/cpuset"
	"github.com/kvpool/kvpool/internal/harness"
	"github.com/kvpool/kvpool/internal/loadgen/config"
	"github.com/kvpool/kvpool/internal/loadgen/engine"
	"github.com/kvpool/kvpool/internal/loadgen/fill"
	"github.com/kvpool/kvpool/internal/loadgen/workload"
	"github.com/kvpool/kvpool/internal/ratio"
)

// The store states a floor bench measures kvserver in.
const (
	// stateFresh: just filled, the data still in Pebble's memtable (a fill
	// smaller than -memtable-mb).
	stateFresh = "fresh"
	// stateCompacted: filled, then flushed and compacted into sstables
	// (kvserver -compact-at-start).
	stateCompacted = "compacted"
)

// baseBare names the bare handler as -base.
const baseBare = "bare"

// floorOptions are loadtest floor's settings.
type floorOptions struct {
	kvserver   string   // the kvserver binary measured
	args       []string // its flags besides -pool direct
	base       string   // baseBare, or a kvserver binary to measure against
	baseArgs   []string // the base kvserver's flags
	serverCPUs cpuset.Set
	cpuCounts  []int // server CPU counts run in turn, the first n of serverCPUs each (nil: all of them, once)
	loaderCPUs cpuset.Set
	rounds     int
	round      time.Duration
	warmup     time.Duration
	conns      int
	rate       float64 // requests per second sent to each server in a round, open loop; 0: a closed loop
	keys       uint64
	valueSize  int
	workloads  []string
	states     []string
	idleWithin time.Duration // after a PUT round, how long kvserver may take to settle
	profileDir string        // "": no profiles
	self       string        // this binary, to start bare-server with
	selfEnv    []string      // added to its environment (tests)
}

// floorServer is one side of the pair: the bare handler or a kvserver.
type floorServer struct {
	name   string
	binary string   // "" for the bare handler
	args   []string // kvserver flags
	srv    *harness.Server
}

func (f *floorServer) isKvserver() bool { return f.binary != "" }

// floorRun is what one round measured of one server.
type floorRun struct {
	cpuPerReq   float64 // µs of server CPU per request
	rate        float64 // answers per second
	serverShare float64 // the server's CPU over the round, as a share of its CPUs
	loaderShare float64 // the loader's, of its CPUs
	failed      int64   // transport errors and answers other than 200, 201, 404
}

// runFloor is `loadtest floor`: the bare fasthttp handler and kvserver
// direct on the same CPUs, in interleaved paired rounds of a closed loop
// (or a rate both sustain), for kvserver's CPU per request and throughput
// as a multiple of the floor's with a 95 % interval.
func runFloor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFloor(args, stderr)
	if err != nil {
		return err
	}
	return floorBench(ctx, o, stdout, stderr)
}

func parseFloor(args []string, stderr io.Writer) (floorOptions, error) {
	o := floorOptions{rounds: 6, round: 4 * time.Second, warmup: time.Second, conns: 64, keys: 100_000, valueSize: 500, idleWithin: 30 * time.Second}
	fs := flag.NewFlagSet("loadtest floor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.kvserver, "kvserver", "bin/kvserver", "kvserver binary to measure (make build); it runs -pool direct")
	kvArgs := fs.String("args", "", "more kvserver flags, space-separated (\"-cache-mb 128\")")
	fs.StringVar(&o.base, "base", baseBare, "what kvserver is measured against: bare (loadtest bare-server, the fasthttp handler that does no work) or another kvserver binary (before/after a change)")
	baseArgs := fs.String("base-args", "", "flags of a kvserver -base, space-separated (default: -args)")
	serverCPUs := fs.String("server-cpus", "0", "CPUs both servers run on, a list such as 0 or 0-7")
	var cpuCounts listFlag
	fs.Var(&cpuCounts, "cpu-counts", "server CPU counts to run in turn, increasing, such as 1,2,4,8: the first n of -server-cpus each, then each server's throughput scaling from the first count (default: all of -server-cpus, once)")
	loaderCPUs := fs.String("loader-cpus", "", "CPUs the loader runs on, one event loop each, such as 1 or 8-15 (default: every other CPU this process may use)")
	fs.IntVar(&o.rounds, "rounds", o.rounds, fmt.Sprintf("paired rounds per workload and store state, which goes first alternating (%d or more bound a 95 %% interval)", ratio.MinPairs))
	fs.DurationVar(&o.round, "round", o.round, "length of each server's run in a round")
	fs.DurationVar(&o.warmup, "warmup", o.warmup, "an unmeasured run of each server before a workload's rounds (0: none)")
	fs.IntVar(&o.conns, "conns", o.conns, "connections: in a closed loop each sends its next request when answered")
	fs.Float64Var(&o.rate, "rate", 0, "requests per second sent to each server in each round, open loop, over -conns (0: a closed loop, as fast as each answers). "+
		"At a rate both sustain, the two are compared at one load with the loader's CPU to spare: a request's CPU depends on the load, and in a closed loop the slower server runs at a lower one")
	fs.Uint64Var(&o.keys, "keys", o.keys, "ids filled before the rounds and asked for (100000 x 500 B fit kvserver's 64 MiB memtable)")
	fs.IntVar(&o.valueSize, "value-size", o.valueSize, "bytes per value (fill and PUT)")
	workloads := fs.String("workloads", "get,put", "comma-separated: get, put")
	fs.StringVar(&o.profileDir, "profile", "", "after each workload's rounds, one more kvserver round with its CPU profile saved in this folder (floor-STATE-WORKLOAD.pprof; go tool pprof reads it); not measured")
	states := fs.String("states", stateFresh+","+stateCompacted, "store states, comma-separated: fresh (the fill still in the memtable), compacted (flushed and compacted into sstables at start)")
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
	o.args = strings.Fields(*kvArgs)
	o.baseArgs = o.args
	if *baseArgs != "" {
		o.baseArgs = strings.Fields(*baseArgs)
	}
	var perr error
	if o.serverCPUs, perr = cpuset.Parse(*serverCPUs); perr != nil {
		return o, usageError(fmt.Errorf("-server-cpus: %w", perr))
	}
	if *loaderCPUs != "" {
		if o.loaderCPUs, perr = cpuset.Parse(*loaderCPUs); perr != nil {
			return o, usageError(fmt.Errorf("-loader-cpus: %w", perr))
		}
	} else {
		aff, err := cpuset.Affinity()
		if err != nil {
			return o, fmt.Errorf("cannot read this process's CPUs: %w; give -loader-cpus", err)
		}
		o.loaderCPUs = aff.Minus(o.serverCPUs)
	}
	switch {
	case o.serverCPUs.IsEmpty():
		return o, usageError(errors.New("-server-cpus is empty"))
	case o.loaderCPUs.IsEmpty():
		return o, usageError(fmt.Errorf("no CPU is left for the loader beside -server-cpus %s; give -loader-cpus", o.serverCPUs))
	case o.serverCPUs.Overlaps(o.loaderCPUs):
		return o, usageError(fmt.Errorf("-server-cpus %s and -loader-cpus %s overlap: the loader would take the servers' CPU", o.serverCPUs, o.loaderCPUs))
	case o.rounds < 1:
		return o, usageError(fmt.Errorf("-rounds %d: give 1 or more", o.rounds))
	case o.round <= 0:
		return o, usageError(fmt.Errorf("-round %v: give a positive duration", o.round))
	case o.conns < 1:
		return o, usageError(fmt.Errorf("-conns %d: give 1 or more", o.conns))
	case o.rate < 0 || math.IsNaN(o.rate) || math.IsInf(o.rate, 0):
		return o, usageError(fmt.Errorf("-rate %v: give 0 (a closed loop) or a rate both servers sustain", o.rate))
	case o.keys < 1:
		return o, usageError(fmt.Errorf("-keys %d: give 1 or more", o.keys))
	case o.valueSize < 1:
		return o, usageError(fmt.Errorf("-value-size %d: give 1 or more", o.valueSize))
	}
	var err error
	if o.workloads, err = listOf(*workloads, "-workloads", "get", "put"); err != nil {
		return o, usageError(err)
	}
	if o.states, err = listOf(*states, "-states", stateFresh, stateCompacted); err != nil {
		return o, usageError(err)
	}
	if o.cpuCounts, err = cpuCounts.ints("-cpu-counts", 1); err != nil {
		return o, usageError(err)
	}
	if slices.Sort(o.cpuCounts); len(o.cpuCounts) > 0 && slices.Max(o.cpuCounts) > o.serverCPUs.Len() {
		return o, usageError(fmt.Errorf("-cpu-counts %v: -server-cpus has %d CPUs", cpuCounts, o.serverCPUs.Len()))
	}
	o.cpuCounts = slices.Compact(o.cpuCounts)
	if o.rate > 0 && len(o.cpuCounts) > 1 {
		return o, usageError(fmt.Errorf("-rate with -cpu-counts %v: scaling is each server's closed-loop throughput; measure it without -rate", cpuCounts))
	}
	if o.self, err = os.Executable(); err != nil && o.base == baseBare {
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

// floorBench runs o on each count of its server CPUs in turn (or on all
// of them), then, for more than one count, how each server's throughput
// scaled.
func floorBench(ctx context.Context, o floorOptions, stdout, stderr io.Writer) error {
	counts, all := o.cpuCounts, o.serverCPUs
	if len(counts) == 0 {
		counts = []int{all.Len()}
	}
	byCount := make([][]floorSummary, len(counts))
	for c, n := range counts {
		o.serverCPUs = all.First(n)
		var err error
		if byCount[c], err = floorOn(ctx, o, stdout, stderr); err != nil {
			return err
		}
	}
	if len(counts) > 1 {
		printScaling(stdout, counts, byCount)
	}
	return nil
}

// floorOn runs o on o.serverCPUs: per store state, fresh servers, a fill,
// then per workload the paired rounds and their summary, which it returns
// in that order.
func floorOn(ctx context.Context, o floorOptions, stdout, stderr io.Writer) ([]floorSummary, error) {
	base := &floorServer{name: baseBare}
	if o.base != baseBare {
		base = &floorServer{name: "base", binary: o.base, args: o.baseArgs}
	}
	subject := &floorServer{name: "kvserver", binary: o.kvserver, args: o.args}
	loop := "closed loop"
	if o.rate > 0 {
		loop = "at " + thousands(o.rate) + " req/s open loop"
	}
	fmt.Fprintf(stdout, "floor: %s against %s; servers on CPUs %s, loader on CPUs %s; %d conns %s; %d rounds of %v each; %d ids x %d B\n",
		describe(subject), describe(base), o.serverCPUs, o.loaderCPUs, o.conns, loop, o.rounds, o.round, o.keys, o.valueSize)
	if !base.isKvserver() {
		srv, err := harness.Start(ctx, harness.Options{Argv: []string{o.self, "bare-server", "-addr", "127.0.0.1:0"}, Env: o.selfEnv, CPUs: o.serverCPUs})
		if err != nil {
			return nil, err
		}
		base.srv = srv
		defer srv.Stop(10 * time.Second)
	}
	var sums []floorSummary
	for _, state := range o.states {
		got, err := floorState(ctx, o, state, base, subject, stdout, stderr)
		if err != nil {
			return nil, err
		}
		sums = append(sums, got...)
	}
	return sums, nil
}

func describe(f *floorServer) string {
	if !f.isKvserver() {
		return "the bare fasthttp handler"
	}
	return strings.TrimSpace(fmt.Sprintf("%s -pool direct %s", f.binary, strings.Join(f.args, " ")))
}

// floorState measures every workload with the kvservers in one store
// state, each on a store of its own made for it, stopped afterwards, and
// returns each workload's summary.
func floorState(ctx context.Context, o floorOptions, state string, base, subject *floorServer, stdout, stderr io.Writer) ([]floorSummary, error) {
	for _, f := range []*floorServer{base, subject} {
		if !f.isKvserver() {
			continue
		}
		srv, err := startFilled(ctx, o, f, state)
		if err != nil {
			return nil, fmt.Errorf("%s, store %s: %w", f.name, state, err)
		}
		f.srv = srv
		defer func() {
			if err := srv.Stop(time.Minute); err != nil {
				fmt.Fprintf(stderr, "floor: stopping %s: %v\n", f.name, err)
			}
			os.RemoveAll(srv.DataDir) // made by startFilled, not the harness
		}()
	}
	sums := make([]floorSummary, len(o.workloads))
	for i, wl := range o.workloads {
		var err error
		if sums[i], err = floorWorkload(ctx, o, state, wl, base, subject, stdout); err != nil {
			return nil, err
		}
	}
	return sums, nil
}

// startFilled starts f's kvserver on a fresh store, fills ids 1..o.keys,
// and for stateCompacted starts it again on that store with
// -compact-at-start.
func startFilled(ctx context.Context, o floorOptions, f *floorServer, state string) (*harness.Server, error) {
	dir, err := os.MkdirTemp("", "kvserver-floor-")
	if err != nil {
		return nil, err
	}
	start := func(extra ...string) (*harness.Server, error) {
		args := append([]string{"-pool", "direct"}, f.args...)
		return harness.Start(ctx, harness.Options{Binary: f.binary, Args: append(args, extra...), DataDir: dir, CPUs: o.serverCPUs, StartTimeout: 10 * time.Minute})
	}
	fail := func(srv *harness.Server, err error) (*harness.Server, error) {
		if srv != nil {
			srv.Kill()
		}
		os.RemoveAll(dir)
		return nil, err
	}
	srv, err := start()
	if err != nil {
		return fail(nil, err)
	}
	cfg := config.Default()
	cfg.Target, cfg.CPUs = srv.URL, o.loaderCPUs
	cfg.Workload.Keys, cfg.Workload.ValueSize = o.keys, o.valueSize
	cfg.Progress, cfg.KeepResults = 0, false
	fr, err := fill.Run(ctx, cfg, fill.Range{From: 1, To: o.keys}, nil)
	switch {
	case err != nil:
		return fail(srv, fmt.Errorf("fill: %w", err))
	case !fr.Complete:
		return fail(srv, fmt.Errorf("fill stopped at id %d of %d (%d errors)", fr.ResumeFrom, o.keys, fr.ErrorCount))
	}
	if state != stateCompacted {
		return srv, nil
	}
	if err := srv.Stop(time.Minute); err != nil {
		return fail(nil, fmt.Errorf("stopping after the fill: %w", err))
	}
	if srv, err = start("-compact-at-start"); err != nil {
		return fail(nil, err)
	}
	return srv, nil
}

// floorWorkload runs one workload's warm-up and paired rounds, prints
// each round and the summary, and returns the summary.
func floorWorkload(ctx context.Context, o floorOptions, state, wl string, base, subject *floorServer, stdout io.Writer) (floorSummary, error) {
	mix := workload.Get
	if wl == "put" {
		mix = workload.Put
	}
	pair := [2]*floorServer{base, subject}
	if o.warmup > 0 {
		for _, f := range pair {
			if _, err := floorMeasure(ctx, o, f, mix, o.warmup); err != nil {
				return floorSummary{}, err
			}
		}
	}
	runs := [2][]floorRun{}
	key := fmt.Sprintf("store %s, %s", state, strings.ToUpper(wl))
	fmt.Fprintf(stdout, "\n%s:\n", key)
	for r := range o.rounds {
		order := []int{0, 1}
		if r%2 == 1 {
			order = []int{1, 0} // which goes first alternates
		}
		var got [2]floorRun
		for _, i := range order {
			m, err := floorMeasure(ctx, o, pair[i], mix, o.round)
			if err != nil {
				return floorSummary{}, err
			}
			got[i] = m
			runs[i] = append(runs[i], m)
		}
		fmt.Fprintf(stdout, "  round %d (%s first): %s %s | %s %s\n", r+1, pair[order[0]].name,
			pair[0].name, got[0], pair[1].name, got[1])
	}
	sum := printFloorSummary(stdout, o, pair, runs)
	sum.key = key
	if o.profileDir != "" {
		path, err := floorProfile(ctx, o, subject, mix, filepath.Join(o.profileDir, "floor-"+state+"-"+wl+".pprof"))
		if err != nil {
			return sum, err
		}
		fmt.Fprintf(stdout, "  kvserver's CPU profile over one more round: %s\n", path)
	}
	return sum, nil
}

// floorProfile runs one more round of mix against f while taking its CPU
// profile into path.
func floorProfile(ctx context.Context, o floorOptions, f *floorServer, mix workload.Mix, path string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	seconds := max(1, int(o.round.Round(time.Second)/time.Second))
	done := make(chan error, 1)
	go func() { done <- f.srv.Profile(ctx, "cpu", seconds, path) }()
	// The load outlasts the profile by a little on both sides.
	if _, err := floorMeasure(ctx, o, f, mix, time.Duration(seconds)*time.Second+500*time.Millisecond); err != nil {
		return "", err
	}
	if err := <-done; err != nil {
		return "", fmt.Errorf("profiling %s: %w", f.name, err)
	}
	return path, nil
}

func (m floorRun) String() string {
	s := fmt.Sprintf("%.2f µs/req %s req/s server %.0f%% loader %.0f%%", m.cpuPerReq, thousands(m.rate), 100*m.serverShare, 100*m.loaderShare)
	if m.failed > 0 {
		s += fmt.Sprintf(" FAILED %d", m.failed)
	}
	return s
}

// sustained is the share of -rate each round must answer for the two
// servers to count as measured at the same load.
const sustained = 0.97

// serverBusy is the median CPU share below which a closed loop did not
// keep a server busy: it waited (fsync), or another process took its CPU.
// At a -rate the servers idle by design and it is not checked.
const serverBusy = 0.85

// floorSummary is what one state and workload's rounds gave on one CPU set.
type floorSummary struct {
	key         string         // "store fresh, GET"
	names       [2]string      // base's, subject's
	rates       [2]float64     // their median throughputs
	throughput  ratio.Interval // subject's over base's, paired
	loaderBound bool           // the loader reached cpuset.Busy: throughput not judged
}

// printFloorSummary prints each server's medians and subject/base for CPU
// per request and throughput with their 95 % intervals, and how busy the
// loader was.
func printFloorSummary(w io.Writer, o floorOptions, pair [2]*floorServer, runs [2][]floorRun) floorSummary {
	col := func(i int, f func(floorRun) float64) []float64 {
		out := make([]float64, len(runs[i]))
		for k, r := range runs[i] {
			out[k] = f(r)
		}
		return out
	}
	cpu := func(r floorRun) float64 { return r.cpuPerReq }
	rate := func(r floorRun) float64 { return r.rate }
	loader := func(r floorRun) float64 { return r.loaderShare }
	share := func(r floorRun) float64 { return r.serverShare }
	for i, f := range pair {
		fmt.Fprintf(w, "  %-8s median %.2f µs CPU/req (%.2f..%.2f), %s req/s, server busy %.0f%% of its CPUs\n", f.name,
			ratio.Median(col(i, cpu)), slices.Min(col(i, cpu)), slices.Max(col(i, cpu)), thousands(ratio.Median(col(i, rate))), 100*ratio.Median(col(i, share)))
	}
	cpuIv, _ := ratio.Paired(col(0, cpu), col(1, cpu))
	rateIv, _ := ratio.Paired(col(0, rate), col(1, rate))
	fmt.Fprintf(w, "  %s/%s CPU per request: %s%s\n", pair[1].name, pair[0].name, intervalText(cpuIv), same(cpuIv))
	worst := max(slices.Max(col(0, loader)), slices.Max(col(1, loader)))
	var note string
	if o.rate == 0 {
		fmt.Fprintf(w, "  %s/%s throughput:      %s%s\n", pair[1].name, pair[0].name, intervalText(rateIv), same(rateIv))
		note = "headroom: the servers, not the loader, set the pace"
		if worst >= cpuset.Busy {
			note = fmt.Sprintf("NOT judged for throughput: the loader reached %.0f%% of its CPUs, so it may have set the pace; -rate compares CPU per request at one load", 100*worst)
		}
	} else {
		least := min(slices.Min(col(0, rate)), slices.Min(col(1, rate))) / o.rate
		// Rounded down: "at least 100.0%" only where every round answered all.
		fmt.Fprintf(w, "  both answered at least %.1f%% of the %s req/s sent\n", math.Floor(1000*least)/10, thousands(o.rate))
		if least < sustained {
			fmt.Fprintf(w, "  NOT at the same load: a round answered under %.0f%% of -rate (a server, or the loader, fell behind); lower -rate\n", 100*sustained)
		}
		note = "headroom: the loader sent on time"
		if worst >= cpuset.Busy {
			note = fmt.Sprintf("the loader reached %.0f%% of its CPUs: it may have sent late; lower -rate", 100*worst)
		}
	}
	fmt.Fprintf(w, "  loader CPU share: median %.0f%% / %.0f%%, max %.0f%% of %d CPUs (%s)\n",
		100*ratio.Median(col(0, loader)), 100*ratio.Median(col(1, loader)), 100*worst, o.loaderCPUs.Len(), note)
	if idle := min(ratio.Median(col(0, share)), ratio.Median(col(1, share))); o.rate == 0 && idle < serverBusy {
		fmt.Fprintf(w, "  NOTE: a server was busy only %.0f%% of its CPUs: it waited (on fsync with -sync), or another process took its CPU; a server that waits pays more per request\n", 100*idle)
	}
	var failed int64
	for i := range runs {
		for _, r := range runs[i] {
			failed += r.failed
		}
	}
	if failed > 0 {
		fmt.Fprintf(w, "  WARNING: %d requests failed or were answered other than 200/201/404\n", failed)
	}
	return floorSummary{names: [2]string{pair[0].name, pair[1].name}, rates: [2]float64{ratio.Median(col(0, rate)), ratio.Median(col(1, rate))},
		throughput: rateIv, loaderBound: worst >= cpuset.Busy}
}

// printScaling prints, per state and workload, each server's throughput
// at every CPU count as a multiple of its own at the first count, and the
// subject's scaling over the base's. That ratio's interval joins the two
// counts' paired intervals (the lower end of one over the upper end of
// the other): wider than either, as it must be for two runs apart.
func printScaling(w io.Writer, counts []int, byCount [][]floorSummary) {
	fmt.Fprintf(w, "\nscaling: throughput on n server CPUs as a multiple of its own on %d\n", counts[0])
	for k, first := range byCount[0] {
		fmt.Fprintf(w, "%s:\n", first.key)
		for c, sums := range byCount {
			s, rel := sums[k], ratio.Interval{Lo: math.Inf(-1), Hi: math.Inf(1)}
			rel.Median, rel.N = s.throughput.Median/first.throughput.Median, min(s.throughput.N, first.throughput.N)
			if s.throughput.Finite() && first.throughput.Finite() {
				rel.Lo, rel.Hi = s.throughput.Lo/first.throughput.Hi, s.throughput.Hi/first.throughput.Lo
			}
			note := ""
			if s.loaderBound || first.loaderBound {
				note = fmt.Sprintf(" (NOT judged: the loader reached %.0f %% of its CPUs)", 100*cpuset.Busy)
			}
			fmt.Fprintf(w, "  n=%d: %s %s req/s (%.2f×), %s %s req/s (%.2f×); %s's scaling over %s's %s%s%s\n", counts[c],
				s.names[0], thousands(s.rates[0]), s.rates[0]/first.rates[0], s.names[1], thousands(s.rates[1]), s.rates[1]/first.rates[1],
				s.names[1], s.names[0], intervalText(rel), same(rel), note)
		}
	}
}

// same is " ~" where iv cannot tell the two apart, as benchstat marks it.
func same(iv ratio.Interval) string {
	if iv.Finite() && !iv.Differs() {
		return " ~"
	}
	return ""
}

// thousands is x rounded, with commas: 74,074.
func thousands(x float64) string {
	return message.NewPrinter(language.English).Sprintf("%d", int64(math.Round(x)))
}

// floorMeasure runs one round of mix (closed loop, or at o.rate) against
// f and reads f's CPU from /proc around it. A kvserver's PUT round is
// read once it has settled again (its flushes and compactions done, at
// most o.idleWithin), so that the writes' background work is charged to
// them and not to the next round.
func floorMeasure(ctx context.Context, o floorOptions, f *floorServer, mix workload.Mix, d time.Duration) (floorRun, error) {
	cfg := config.Default()
	cfg.Target, cfg.CPUs = f.srv.URL, o.loaderCPUs
	cfg.Rate, cfg.Duration = o.rate, d
	cfg.Conns, cfg.MaxConns = o.conns, o.conns
	cfg.Workload.Mix, cfg.Workload.Keys, cfg.Workload.ValueSize = mix, o.keys, o.valueSize
	cfg.Progress, cfg.KeepResults = 0, false
	before, err := f.srv.Sample()
	if err != nil {
		return floorRun{}, err
	}
	res, err := engine.Run(ctx, cfg, nil)
	if err != nil {
		return floorRun{}, fmt.Errorf("%s: %w", f.name, err)
	}
	if ctx.Err() != nil {
		return floorRun{}, ctx.Err()
	}
	end, err := f.srv.Sample()
	if err != nil {
		return floorRun{}, err
	}
	after := end
	if f.isKvserver() && mix.Put > 0 {
		if _, err := f.srv.WaitIdle(ctx, harness.IdleWindows, o.idleWithin); err != nil && ctx.Err() != nil {
			return floorRun{}, ctx.Err()
		}
		if after, err = f.srv.Sample(); err != nil {
			return floorRun{}, err
		}
	}
	m := floorRun{rate: res.AchievedRate(), loaderShare: res.LoaderUse().Share,
		serverShare: cpuset.UseOf(end.CPU-before.CPU, end.At.Sub(before.At), o.serverCPUs.Len()).Share}
	if res.Sent > 0 {
		m.cpuPerReq = float64((after.CPU - before.CPU).Microseconds()) / float64(res.Sent)
	}
	for code, n := range res.Codes { // 0: a transport error
		if code != 200 && code != 201 && code != 404 {
			m.failed += n
		}
	}
	return m, nil
}
